"""The TNA LinkGuardian's set-up over a real P4Runtime session (lgkit/control/tna_setup.py), and
`--program`'s names and bad inputs for `lgkit run` (lgkit/net/spec/programs.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_p4rt_support import DEVICE_ID, RunningSwitch, compile_program

from lgkit.control.linkguardian import (
    LGLayout,
    LGParams,
    ProtectedLink,
    apply_ops,
    switch_setup_ops,
)
from lgkit.control.session import P4RuntimeSession
from lgkit.control.tna_setup import (
    HOLE_SEQS,
    HOLES,
    MAX_HOLES,
    NOTIFY_MAX_PKT_LEN,
    PFC_SESSION_OFFSET,
    RECEIVER_STATE,
    SEEN,
    SEEN_SEQS,
    SENDER_STATE,
    TNA_LAYOUT,
    TnaLGWriter,
    timer_command,
    tna_params,
)
from lgkit.net.spec.programs import LG_PROGRAMS, ProgramError, parse_programs
from lgkit.net.testbed.lgprotection import TestbedProtection
from lgkit.net.testbed.testbed import frames_per_s
from lgkit.sw.exec.interp.tables import Exact
from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.frontend.compiler import compile_file

TNA = LG_PROGRAMS["tofino"]
V1 = LG_PROGRAMS["v1model"]
PORT = 2
NOT_RESET = {*HOLES, SEEN, "LgEgress.lg_qdepth_max"}
"""Per-sequence state (reTxReqs, LG_NB's tags: a new epoch clears the port's range of them) and
the queue-depth statistic: not a role's per-port registers."""


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    return compile_program(TNA, tmp_path_factory.mktemp("tna"))


@pytest.fixture
def rig(built):
    running = RunningSwitch(ports=(1, PORT))
    session = P4RuntimeSession("tna", f"127.0.0.1:{running.port}", DEVICE_ID, *built).open()
    yield running, TnaLGWriter(session)
    session.close()
    running.stop()


def test_the_set_up_fills_the_loop_ports_and_makes_each_ports_two_sessions(rig) -> None:
    running, writer = rig
    apply_ops(writer, switch_setup_ops(TNA_LAYOUT))
    writer.set_loop_ports([TNA_LAYOUT.recirc_port, TNA_LAYOUT.loop_port])
    link = ProtectedLink("tx", PORT, "rx", PORT, tna_params(LGParams(max_holes=5)))
    for _, ops in link.activation(TNA_LAYOUT):
        apply_ops(writer, ops)
    pl = running.switch.pipeline
    assert pl.value_sets["LgIngressParser.lg_loop_ports"].members() == [
        [Exact(68)], [Exact(324)]]
    session = TNA_LAYOUT.port_session(PORT)
    pfc = session + PFC_SESSION_OFFSET
    assert pl.clone_sessions[session] == pl.clone_sessions[pfc] == [(PORT, 0)]
    assert pl.mirror_max_len.get(session) == pl.mirror_max_len.get(pfc) == NOTIFY_MAX_PKT_LEN
    assert not pl.mirror_max_len.get(TNA_LAYOUT.recirc_session)  # Tx copies whole
    # notifications at the high priority, PFC frames and Tx copies in queue 0
    assert pl.mirror_queue.get(session) == TNA_LAYOUT.prio_high > 0
    assert not pl.mirror_queue.get(pfc) and not pl.mirror_queue.get(TNA_LAYOUT.recirc_session)
    config = writer.read_port(PORT)
    assert config is not None
    assert (config.tx_on, config.rx_on, config.rx_max_holes) == (1, 1, MAX_HOLES)
    assert (config.tx_epoch, config.rx_epoch) == (1, 1)
    writer.set_timer("receiver", PORT)
    assert pl.value_sets["LgIngressParser.lg_pktgen_ports"].members() == [[Exact(196)]]
    [timer] = pl.tables["LgIngress.lg_timers"].entries()
    assert (timer.keys, timer.params) == ([Exact(2), Exact(0)], [PORT, 8])  # KIND_ACK


def test_a_new_epoch_resets_the_roles_per_port_registers(rig) -> None:
    running, writer = rig
    pl = running.switch.pipeline
    fresh = Pipeline.load(compile_file(str(TNA)))
    link = ProtectedLink("tx", PORT, "rx", PORT, tna_params(LGParams()))
    for _, ops in link.activation(TNA_LAYOUT):
        apply_ops(writer, ops)
    names = [*SENDER_STATE, *RECEIVER_STATE]
    for name in names:  # state left by a previous activation, here and at another port
        if name in pl.struct_registers:
            pl.struct_registers[name].write(PORT, [7, 7])
            pl.struct_registers[name].write(PORT + 1, [5, 5])
        else:
            pl.registers[name].write(PORT, fresh.registers[name].read(PORT) ^ 7)
            pl.registers[name].write(PORT + 1, fresh.registers[name].read(PORT) ^ 5)
    per_seq = [(pl.registers[SEEN], SEEN_SEQS, 0x85)]  # LG_NB tags, reTxReqs bits
    per_seq += [(pl.registers[name], HOLE_SEQS, 1) for name in HOLES]
    for register, seqs, value in per_seq:  # cells of this port and of the next
        for cell in (PORT * seqs, (PORT + 1) * seqs - 1, (PORT + 1) * seqs):
            register.write(cell, value)
    for _, ops in link.deactivation():
        apply_ops(writer, ops)
    for _, ops in link.activation(TNA_LAYOUT):
        apply_ops(writer, ops)
    for register, seqs, value in per_seq:
        cells = (PORT * seqs, (PORT + 1) * seqs - 1, (PORT + 1) * seqs)
        assert [register.read(cell) for cell in cells] == [0, 0, value], register
    for name in names:
        now, first = ((pl.struct_registers, fresh.struct_registers) if name in pl.struct_registers
                      else (pl.registers, fresh.registers))
        assert now[name].read(PORT) == first[name].read(PORT), name
        assert now[name].read(PORT + 1) != first[name].read(PORT + 1), name
    assert set(names) | NOT_RESET == set(fresh.registers) | set(fresh.struct_registers)


def protection_at(rate_mbps: float) -> TestbedProtection:
    """A testbed's protection at this link rate, a TNA sender and a v1model receiver (no
    network needed)."""
    bed = object.__new__(TestbedProtection)
    bed.testbed = SimpleNamespace(target="builtin", rate_mbps=rate_mbps,  # type: ignore[assignment]
                                  spec=SimpleNamespace(protected=("tx", "rx")),
                                  network=SimpleNamespace(priority_queues=3))
    bed.layouts = {"tx": TNA_LAYOUT, "rx": LGLayout()}
    bed.ports, bed.tna, bed.loop_share, bed.courier_share = (PORT, 1), {"tx"}, 2.0, 0.5
    return bed


def test_each_activation_sets_the_timer_period_for_the_current_link_rate() -> None:
    """Dummies at the v1model couriers' rate (half the full-size frame rate), also after the
    link rate changed (the rate finder's set_rate between flows)."""
    assert timer_command("receiver", 2_000_000).startswith(
        "pktgen_timer 2 2000000 pipe=1 payload=020000000002020000000001")
    for rate in (10.0, 3.0):
        [timer] = [line for line in protection_at(rate).queue_rates()["tx"]
                   if line.startswith("pktgen_timer")]
        assert timer == timer_command("sender", round(2e9 / frames_per_s(rate)))


def test_program_names() -> None:
    assert parse_programs(None) == parse_programs("v1model")
    both = parse_programs("tofino")
    assert (both.sender, both.receiver, both.others) == (TNA, TNA, V1)
    assert both.uses_tna and both.is_lg
    mixed = parse_programs("sender=tofino,receiver=v1model")
    assert (mixed.sender, mixed.receiver) == (TNA, V1)
    assert mixed.describe() == "sender tofino, receiver v1model"
    assert parse_programs("receiver=tofino").sender == V1
    own = parse_programs(str(V1.parent / "basic.p4"))
    assert not own.is_lg and not own.uses_tna


@pytest.mark.parametrize("value", ["arm", "sender=arm", "sender=tofino,middle=v1model",
                                   "sender"])
def test_bad_program_names_are_refused(value: str) -> None:
    with pytest.raises(ProgramError):
        parse_programs(value)


@pytest.mark.parametrize(("argv", "message"), [
    (["--program", "tofino", "--target", "bmv2"],
     "lgkit: error: --program tofino: the TNA program runs on the built-in target only "
     "(--target builtin), not on bmv2"),
    (["--program", "sender=tofino,receiver=arm"],
     "lgkit: error: --program sender=tofino,receiver=arm: expected ROLE=ARCH items, ROLE one "
     "of sender, receiver, ARCH one of v1model, tofino"),
])
def test_lgkit_run_refuses_in_one_line(argv: list[str], message: str, tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "lgkit.cli", "run", "demo", *argv,
                           "--results", str(tmp_path)], capture_output=True, text=True,
                          timeout=60, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", message + "\n")
    assert list(tmp_path.iterdir()) == []  # nothing half-written
