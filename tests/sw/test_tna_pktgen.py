"""The packet generator (TNA) and PFC pause (both architectures) on the built-in target: the STF
files of tests/p4/tna/pktgen, the virtual times of timer packets and pause ends in untimed runs
and on a switch's virtual clock, and bad input."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_tm_queues import PROGRAM as V1_PROGRAM
from test_tm_queues import fields, frame
from testpaths import TESTS

from lgkit.cli import main
from lgkit.sw.exec.native.build import compiler
from lgkit.sw.exec.native.select import ENGINES, NativeUntimed
from lgkit.sw.exec.passclock import PassClock
from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.frontend.compiler import compile_file
from lgkit.sw.switch.control_service import CommandError, SwitchCommands
from lgkit.sw.switch.vnet import VirtualNetwork

FOLDER = TESTS / "p4" / "tna" / "pktgen"
PROGRAM = FOLDER / "gen.p4"
STFS = sorted(FOLDER.glob("*.stf"))
HOST_FRAME = bytes.fromhex("000000000002 000000000001 0800 01".replace(" ", ""))


def pfc(class_enable: int, quanta: list[int]) -> bytes:
    """An 802.1Qbb frame: class-enable vector, quanta of priorities 0..7."""
    body = bytes.fromhex("0101") + class_enable.to_bytes(2, "big")
    body += b"".join(q.to_bytes(2, "big") for q in quanta + [0] * (8 - len(quanta)))
    return bytes.fromhex("0180C2000001 000000000009 8808".replace(" ", "")) + body


@pytest.fixture(scope="module")
def compiled() -> object:
    return compile_file(str(PROGRAM))


@pytest.mark.parametrize("stf", STFS, ids=[p.stem for p in STFS])
def test_stf(stf: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stf", str(PROGRAM), str(stf)]) == 0
    assert "PASS" in capsys.readouterr().out


def untimed(compiled: object) -> Pipeline:
    pl = Pipeline.load(compiled)  # type: ignore[arg-type]
    pl.tables["I.t"].insert(table_entry(1, 2))
    return pl


def table_entry(port: int, to: int) -> object:
    from lgkit.sw.exec.interp.tables import Exact, TableEntry

    return TableEntry([Exact(port)], "I.fwd", [to])


def test_timer_packets_come_at_their_virtual_times(compiled: object) -> None:
    pl = untimed(compiled)
    pl.untimed_clock = PassClock(pass_ns=1)  # passes cost 1 ns: the steps stay on whole us
    arch = pl.arch
    arch.command(pl, "pktgen_timer", ["3", "5000", "one_shot", "batches=2", "packets=2",
                                      "ibg=3000", "ipg=1000", "pipe=0"])
    times = []
    for _ in range(12):  # 1 us steps; each packet is run when its time has passed
        for port, data in arch.advance(pl, 1000):
            times.append((pl.untimed_clock.now_ns, port, data[:6].hex()))
    # packet p of batch b at 5 us + b * 3 us + p * 1 us, run in the 1 us step after that
    assert [(t, h) for t, _, h in times] == [
        (6000, "030000000000"), (7000, "030000000001"),
        (9000, "030000010000"), (10000, "030000010001")]
    assert {port for _, port, _ in times} == {2}


def test_a_periodic_timer_fires_every_period_from_its_configuration(compiled: object) -> None:
    pl = untimed(compiled)
    pl.arch.advance(pl, 7000)  # configured at 7 us: fires at 17, 27, ... us
    pl.arch.command(pl, "pktgen_timer", ["0", "10000"])
    assert pl.arch.advance(pl, 10_000) == []  # up to 17 us, not including it
    assert [d[:6].hex() for _, d in pl.arch.advance(pl, 1)] == ["000000000000"]
    assert len(pl.arch.advance(pl, 100_000)) == 10  # 27 .. 117 us


def test_pipe_selects_the_generator_port(compiled: object) -> None:
    pl = untimed(compiled)
    pl.arch.command(pl, "pktgen_timer", ["1", "1000", "one_shot", "pipe=1"])
    # port 196 (pipe 1's port 68) is not the program's generator port: its parser takes
    # the packet for Ethernet and `t` has no entry for it, so nothing leaves
    assert pl.arch.advance(pl, 5000) == []
    pl.arch.command(pl, "pktgen_timer", ["1", "1000", "one_shot", "pipe=0"])
    assert [d[:1] for _, d in pl.arch.advance(pl, 5000)] == [b"\x01"]


def test_a_pfc_pause_holds_the_queue_for_its_quanta(compiled: object) -> None:
    pl = untimed(compiled)
    clock = pl.untimed_clock
    assert pl.run_untimed(2, pfc(1, [1000])) == []  # the MAC's: not forwarded
    until = clock.now_ns + 1000 * 512 * 10**9 // (10 * 10**9)  # 51.2 us at 10 Gb/s
    assert pl.run_untimed(1, HOST_FRAME) == []
    assert pl.run_untimed(1, HOST_FRAME[:-1] + b"\x02") == []
    assert pl.arch.advance(pl, until - 1 - clock.now_ns) == []
    assert [d[-1] for _, d in pl.arch.advance(pl, 1)] == [1, 2]  # in order, at the end
    assert pl.run_untimed(1, HOST_FRAME) == [(2, HOST_FRAME)]


def test_a_resume_and_a_new_pause_replace_the_time_left(compiled: object) -> None:
    pl = untimed(compiled)
    clock = pl.untimed_clock
    first, second = HOST_FRAME, HOST_FRAME[:-1] + b"\x02"
    pl.run_untimed(2, pfc(1, [0xFFFF]))
    assert pl.run_untimed(1, first) == []
    assert pl.run_untimed(2, pfc(1, [0])) == [(2, first)]  # resumed at once
    pl.run_untimed(2, pfc(1, [0xFFFF]))
    pl.run_untimed(2, pfc(1, [100]))  # replaces the 3.36 ms: 5.12 us from now
    until = clock.now_ns + 5120
    assert pl.run_untimed(1, second) == []
    assert pl.arch.advance(pl, until - 1 - clock.now_ns) == []
    assert pl.arch.advance(pl, 1) == [(2, second)]


@pytest.mark.parametrize(("line", "message"), [
    ("pktgen_timer 8 1000", "APP must be in 0..7, got 8"),
    ("pktgen_timer 1 0", "PERIOD_NS must be in 1..1000000000000000, got 0"),
    ("pktgen_timer 1 1000 colour=red", "unknown option 'colour=red'"),
    ("pktgen_timer 1 1000 batches=100 packets=100", "batches x packets must be at most 4096"),
    ("pktgen_timer 1 1000 payload=XYZ", "payload must be hex bytes"),
    ("pktgen_port_down 7 batches=2", "unknown option 'batches=2'"),
    ("pktgen_timer 1", "pktgen_timer: expected APP PERIOD_NS"),
    ("port_down 512", "PORT must be in 0..511, got 512"),
])
def test_bad_commands_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          line: str, message: str) -> None:
    assert_stf_error(PROGRAM, line, message, tmp_path, capsys)


def assert_stf_error(program: Path, line: str, message: str, tmp_path: Path,
                     capsys: pytest.CaptureFixture[str]) -> None:
    """`lgkit stf` of a one-line STF file fails with one line naming `message`."""
    stf = tmp_path / "bad.stf"
    stf.write_text(line + "\n")
    assert main(["stf", str(program), str(stf)]) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_a_v1model_program_has_no_packet_generator(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    stf = tmp_path / "v1.stf"
    stf.write_text("pktgen_timer 1 1000\n")
    assert main(["stf", str(V1_PROGRAM), str(stf)]) == 1
    assert "pktgen_timer: not a command of v1model programs" in capsys.readouterr().err


# ---- on a switch (virtual clock) ---------------------------------------------------------------


def tna_network(compiled: object, rate_bps: float = 1e9) -> tuple[VirtualNetwork, object, list]:
    """h1 - port 1 - s1 - port 2 - h2, both links at `rate_bps`; s1 forwards port 1 to 2."""
    net = VirtualNetwork(seed=1)
    pl = Pipeline.load(compiled)  # type: ignore[arg-type]
    pl.tables["I.t"].insert(table_entry(1, 2))
    s1 = net.add_switch("s1", pl)
    hosts = [net.add_host("h1"), net.add_host("h2")]
    net.link(hosts[0], s1, port=1, rate_bps=rate_bps)
    net.link(s1, hosts[1], port=2, rate_bps=rate_bps)
    return net, s1, hosts


def test_the_switch_runs_timer_applications_on_its_clock(compiled: object) -> None:
    net, s1, (_, h2) = tna_network(compiled)
    cli = SwitchCommands(s1)  # type: ignore[arg-type]
    cli.run("pktgen_timer 2 100000 payload=" + HOST_FRAME.hex())
    net.run(until_ns=350_000)
    got = [(t, d[:6].hex()) for t, d in h2.received]
    assert [h for _, h in got] == ["020000000000"] * 3
    # made at 100, 200, 300 us; they reach h2 after the passes and the 1 Gb/s link
    assert all(0 < t - 100_000 * (i + 1) < 10_000 for i, (t, _) in enumerate(got))
    cli.run("pktgen_disable 2")
    net.run(until_ns=1_000_000)
    assert len(h2.received) == 3


def test_switch_commands_refuse_bad_input_and_v1model(compiled: object) -> None:
    _, s1, _ = tna_network(compiled)
    cli = SwitchCommands(s1)  # type: ignore[arg-type]
    with pytest.raises(CommandError, match="pktgen_timer: APP must be in 0..7, got 9"):
        cli.run("pktgen_timer 9 1000")
    net = VirtualNetwork(seed=1)
    v1 = net.add_switch("s1", Pipeline.load(compile_file(str(V1_PROGRAM))))
    with pytest.raises(CommandError, match="not a command of v1model programs"):
        SwitchCommands(v1).run("pktgen_timer 1 1000")


def test_pfc_pauses_a_tna_switch_port_for_its_quanta_at_the_port_rate(compiled: object) -> None:
    net, s1, (h1, h2) = tna_network(compiled, rate_bps=1e9)
    h2.send(pfc(1, [100]), at_ns=0)  # 100 quanta at 1 Gb/s: 51.2 us from its arrival at s1
    h1.send(HOST_FRAME, at_ns=5_000)
    net.run(until_ns=1_000_000)
    # without the pause it would reach h2 within ~7 us; the PFC frame reaches s1 within 1 us
    assert len(h2.received) == 1
    assert 51_200 < h2.received[0][0] < 53_000
    assert s1.counters()["passes"]["ingress"] == 1  # the PFC frame never reached ingress


def test_pfc_pauses_only_the_named_priority_of_a_v1model_switch() -> None:
    net = VirtualNetwork(seed=1)
    s1 = net.add_switch("s1", Pipeline.load(compile_file(str(V1_PROGRAM))), priority_queues=4)
    h1, h2 = net.add_host("h1"), net.add_host("h2")
    net.link(h1, s1, port=1, rate_bps=1e9)
    net.link(s1, h2, port=2, rate_bps=1e9)
    h2.send(pfc(0b1000, [0, 0, 0, 2000]), at_ns=0)  # priority 3: 1.024 ms at 1 Gb/s
    for seq in range(3):
        h1.send(frame(2, prio=3, seq=seq), at_ns=10_000)
    h1.send(frame(2, prio=1, seq=9), at_ns=20_000)
    net.run(until_ns=5_000_000)
    got = [(t, fields(d)["seq"]) for t, d in h2.received]
    assert [seq for _, seq in got] == [9, 0, 1, 2]  # priority 1 passes; 3 waits, in order
    assert got[0][0] < 100_000 and 1_024_000 < got[1][0] < 1_100_000


@pytest.mark.parametrize("engine", ENGINES)
def test_pfc_in_an_untimed_run_of_a_v1model_program(engine: str) -> None:
    pl = Pipeline.load(compile_file(str(V1_PROGRAM)), engine=engine)
    native = engine == "native" and compiler() is not None
    assert isinstance(pl.arch, NativeUntimed) == native
    assert pl.run_untimed(2, pfc(1, [0xFFFF])) == []
    assert pl.run_untimed(1, frame(2, seq=1)) == []
    assert pl.run_untimed(1, frame(3, seq=2))[0][0] == 3  # another port is not paused
    out = pl.run_untimed(2, pfc(1, [0]))
    assert [(port, fields(d)["seq"]) for port, d in out] == [(2, 1)]


def test_a_new_program_stops_the_old_generator(compiled: object) -> None:
    net, s1, (_, h2) = tna_network(compiled)
    cli = SwitchCommands(s1)  # type: ignore[arg-type]
    cli.run("pktgen_timer 2 100000 payload=" + HOST_FRAME.hex())
    net.run(until_ns=150_000)
    s1.set_pipeline(Pipeline.load(compiled))  # type: ignore[attr-defined, arg-type]
    events = net.events_run
    net.run(until_ns=1_000_000)
    assert len(h2.received) == 1
    assert net.events_run - events <= 1  # the old generator's armed timer, and nothing after
