"""The P4Runtime LG writer and session against a real `lgkit switch` (finsy client)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import finsy
import pytest
from testpaths import REPO, TESTS

from lgkit.control.build import build_program
from lgkit.control.linkguardian import (
    LGParams,
    PortConfig,
    ProtectedLink,
    apply_ops,
    copies_for,
    corruption_ops,
    switch_setup_ops,
)
from lgkit.control.p4rt_writer import P4RuntimeLGWriter
from lgkit.control.session import P4RuntimeSession, SessionError
from lgkit.net.testbed.p4switch import wait_for_port

LG_PROGRAM = REPO / "p4" / "linkguardian.p4"
OTHER_PROGRAM = (TESTS / Path(__file__).name).with_suffix(".p4")
ADDRESS = "127.0.0.1:50151"


@pytest.mark.parametrize(("actual", "copies"), [(1e-5, 1), (1e-4, 1), (1e-3, 2)])
def test_eq2_table_for_target_1e8(actual: float, copies: int) -> None:
    assert copies_for(1e-8, actual) == copies


@pytest.fixture(scope="module")
def switch():
    proc = subprocess.Popen([sys.executable, "-m", "lgkit.cli", "switch", "--no-p4",
                             "--device-id", "1", "--grpc-server-addr", ADDRESS],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_for_port(ADDRESS, 30.0, proc), "lgkit switch did not start"
        yield
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.slow
def test_writer_configures_lg_through_tables_sessions_and_groups(switch, tmp_path) -> None:
    built = build_program(LG_PROGRAM, "builtin", tmp_path)
    with P4RuntimeSession("w", ADDRESS, 1, built.p4info, built.config) as session:
        writer = P4RuntimeLGWriter(session)
        apply_ops(writer, switch_setup_ops())
        link = ProtectedLink("a", 2, "a", 3, LGParams(copies=2))
        for _, ops in link.activation():
            apply_ops(writer, ops)
        apply_ops(writer, corruption_ops(2, 0.5))
        sender, receiver = writer.read_port(2), writer.read_port(3)
        defaults = [d for table in ("LgIngress.global_cfg.lg_global",
                                    "LgEgress.global_cfg.lg_global")
                    for d in session.read(finsy.P4TableEntry(table, is_default_action=True))]
        groups = session.read(finsy.P4MulticastGroupEntry(0x4002))
        entries = session.read(finsy.P4TableEntry("LgEgress.port_cfg.lg_port"))
    assert sender is not None and receiver is not None
    assert (sender.tx_on, sender.tx_epoch, sender.tx_mgid, sender.rx_on) == (1, 1, 0x4002, 0)
    assert sender.drop_threshold == round(0.5 * 0xFFFFFFFF)
    assert (receiver.rx_on, receiver.rx_epoch, receiver.port_session) == (1, 1, 4)
    assert [d.action.args for d in defaults] == 2 * [
        {"recirc_port": 68, "recirc_session": 511, "prio_normal": 1, "prio_high": 2,
         "loop_port": 69}]
    assert [str(r) for r in groups[0].replicas] == ["2#1", "2#2"]
    assert sorted(PortConfig(**e.action.args).tx_on for e in entries) == [0, 1]


def test_program_without_lg_tables_is_a_clear_error(switch, tmp_path) -> None:
    built = build_program(OTHER_PROGRAM, "builtin", tmp_path)
    with P4RuntimeSession("w", ADDRESS, 1, built.p4info, built.config) as session:
        writer = P4RuntimeLGWriter(session)
        with pytest.raises(KeyError, match="lg_port"):
            apply_ops(writer, corruption_ops(2, 0.5))
        writer.set_clone_session(7, [(2, 0)])
        writer.set_clone_session(7, [(3, 0), (4, 1)])  # second time: modify
        clones = session.read(finsy.P4CloneSessionEntry(7))
    assert [str(r) for r in clones[0].replicas] == ["3", "4#1"]


def test_unreachable_switch_is_a_clear_error() -> None:
    with pytest.raises(SessionError, match="127.0.0.1:50199"):
        P4RuntimeSession("none", "127.0.0.1:50199", 1).open(timeout=3)
