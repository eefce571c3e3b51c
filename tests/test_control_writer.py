"""The P4Runtime LG writer and session against a real `lgkit switch` (finsy client)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import finsy
import pytest

from lgkit.control.build import build_program
from lgkit.control.linkguardian import copies_for
from lgkit.control.p4rt_writer import P4RuntimeLGWriter
from lgkit.control.session import P4RuntimeSession, SessionError
from lgkit.net.testbed.p4switch import wait_for_port

PROGRAM = Path(__file__).with_suffix(".p4")
ADDRESS = "127.0.0.1:50151"


@pytest.mark.parametrize(("actual", "copies"), [(1e-5, 1), (1e-4, 1), (1e-3, 2)])
def test_eq2_table_for_target_1e8(actual: float, copies: int) -> None:
    assert copies_for(1e-8, actual) == copies


@pytest.fixture(scope="module")
def switch(tmp_path_factory):
    proc = subprocess.Popen([sys.executable, "-m", "lgkit.cli", "switch", "--no-p4",
                             "--device-id", "1", "--grpc-server-addr", ADDRESS],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_for_port(ADDRESS, 30.0, proc), "lgkit switch did not start"
        yield build_program(PROGRAM, "builtin", tmp_path_factory.mktemp("build"))
    finally:
        proc.terminate()
        proc.wait(10)


def test_writer_registers_clone_sessions_and_groups(switch) -> None:
    with P4RuntimeSession("w", ADDRESS, 1, switch.p4info, switch.config) as session:
        writer = P4RuntimeLGWriter(session)
        writer.write_register("WIngress.cfg", 3, 0xABCD)
        assert writer.read_register("WIngress.cfg", 3) == 0xABCD
        writer.set_clone_session(7, [(2, 0)])
        writer.set_clone_session(7, [(3, 0), (4, 1)])  # second time: modify
        writer.set_multicast_group(0x4002, [(2, 1), (2, 2)])
        writer.set_multicast_group(0x4002, [(2, 1)])
        clones = session.read(finsy.P4CloneSessionEntry(7))
        groups = session.read(finsy.P4MulticastGroupEntry(0x4002))
    assert [str(r) for r in clones[0].replicas] == ["3", "4#1"]
    assert [str(r) for r in groups[0].replicas] == ["2#1"]


def test_unknown_register_is_a_clear_error(switch) -> None:
    with P4RuntimeSession("w", ADDRESS, 1, switch.p4info, switch.config) as session:
        with pytest.raises(SessionError, match="lg_cfg_nothing"):
            P4RuntimeLGWriter(session).write_register("lg_cfg_nothing", 0, 1)


def test_unreachable_switch_is_a_clear_error() -> None:
    with pytest.raises(SessionError, match="127.0.0.1:50199"):
        P4RuntimeSession("none", "127.0.0.1:50199", 1).open(timeout=3)
