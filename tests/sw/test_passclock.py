"""Untimed runs on the virtual clock: timeouts longer than the old pass bound are reached at any
cost per pass, a packet that loops forever stops at the bound, time never goes back, the wall
is never read, and STF's `wait DURATION` lets exact virtual time pass."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from finsy.proto import p4i
from test_interp_helpers import load, send, v1switch

from lgkit.cli import main
from lgkit.sw.exec.passclock import PassClock
from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.frontend.compiler import compile_source
from lgkit.sw.lang.p4info import build_p4info
from lgkit.sw.tools.bmv2_stf import Bmv2Error, Bmv2StfRun, wait_s
from lgkit.sw.tools.stf import StfError, StfRunner, parse_stf

# A packet recirculates until `timeout` us have passed since it came in (or forever), then
# leaves with the times it came in and left and the number of recirculations.
LOOP = """
header h_t { bit<48> timeout; bit<8> forever; bit<48> start; bit<48> now; bit<32> loops; }
struct headers { h_t h; }
struct metadata { @field_list(1) bit<48> start; @field_list(1) bit<32> loops; }
parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control MyVerify(inout headers hdr, inout metadata meta) { apply { } }
control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    register<bit<48>>(1) arrived;
    apply {
        if (sm.instance_type == 0) {
            meta.start = sm.ingress_global_timestamp;
            arrived.write(0, sm.ingress_global_timestamp);
        }
        sm.egress_spec = 1;
    }
}
control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        if (hdr.h.forever == 1 || sm.egress_global_timestamp - meta.start < hdr.h.timeout) {
            meta.loops = meta.loops + 1;
            recirculate_preserving_field_list(1);
        } else {
            hdr.h.start = meta.start;
            hdr.h.now = sm.egress_global_timestamp;
            hdr.h.loops = meta.loops;
        }
    }
}
control MyCompute(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
""" + v1switch()
OLD_PASS_BOUND = 10_000
LOOP_ERROR = "error: too many resubmit/recirculate/clone passes; stopped after 1 s of virtual time"


def probe(timeout_us: int, forever: bool = False) -> bytes:
    return timeout_us.to_bytes(6, "big") + bytes([forever]) + bytes(16)


def times(out: bytes) -> tuple[int, int, int]:
    """(start, now, loops) of a packet the loop program sent."""
    return (int.from_bytes(out[7:13], "big"), int.from_bytes(out[13:19], "big"),
            int.from_bytes(out[19:23], "big"))


def pipeline(clock: PassClock | None = None) -> Pipeline:
    p = load(LOOP)
    if clock is not None:
        p.untimed_clock = clock
    return p


def test_default_pass_costs_one_microsecond() -> None:
    p = pipeline()
    ((port, out),) = send(p, 0, probe(30_000))
    # ingress at 0, egress at 1, 3, 5, ...: the first egress at or after 30,000 us is 30,001
    assert port == 1 and times(out) == (0, 30_001, 15_000)
    assert 2 * 15_000 + 2 > OLD_PASS_BOUND  # the 10,000 passes untimed runs once stopped at
    assert p.untimed_clock.now_ns == (2 * 15_000 + 2) * 1_000 and p.logs == []


@pytest.mark.parametrize("pass_ns", [100, 1_000, 10_000, 100_000])
def test_a_timeout_is_reached_at_any_cost_per_pass(pass_ns: int) -> None:
    p = pipeline(PassClock(pass_ns))
    ((port, out),) = send(p, 0, probe(30_000))
    start, now, _ = times(out)
    assert port == 1 and p.logs == []
    assert 30_000 <= now - start <= 30_000 + 2 * max(1, pass_ns // 1_000)


def test_a_packet_that_loops_forever_stops_at_the_virtual_time_bound() -> None:
    p = pipeline(PassClock(pass_ns=100_000))  # 10,000 passes make the bound's 1 s
    assert send(p, 0, probe(0, forever=True)) == []
    assert p.logs == [LOOP_ERROR]
    assert p.untimed_clock.now_ns == 1_000_000_000
    ((_, out),) = send(p, 0, probe(0))  # the bound is per packet: the next one goes through
    assert times(out)[0] == 1_000_000


def test_the_bound_scales_with_the_pass_cost() -> None:
    p = pipeline(PassClock(pass_ns=1_000, limit_ns=2_000_000))
    assert send(p, 0, probe(0, forever=True)) == []
    assert p.untimed_clock.now_ns == 2_000_000  # 2,000 passes of 1 us
    with pytest.raises(ValueError, match="pass_ns <= limit_ns"):
        PassClock(pass_ns=0)


def test_timestamps_never_go_back_between_packets() -> None:
    p = pipeline()
    seen = []
    for _ in range(5):
        ((_, out),) = send(p, 0, probe(3))
        seen.append(times(out)[:2])
    assert seen == [(0, 3), (4, 7), (8, 11), (12, 15), (16, 19)]


def test_untimed_runs_never_read_the_wall(monkeypatch: pytest.MonkeyPatch) -> None:
    p = pipeline()

    def wall() -> float:
        raise AssertionError("an untimed run read the wall clock")

    for name in ("monotonic", "monotonic_ns", "time", "time_ns", "perf_counter",
                 "perf_counter_ns"):
        monkeypatch.setattr(time, name, wall)
    ((_, out),) = send(p, 0, probe(20_000))
    assert times(out)[1] == 20_001


def stf(text: str) -> tuple[bool, Pipeline]:
    compiled = compile_source("#include <core.p4>\n#include <v1model.p4>\n" + LOOP, "loop.p4")
    p = Pipeline.load(compiled)
    result = StfRunner(p, build_p4info(compiled.ir)).run(parse_stf(text))
    return result.passed, p


def test_stf_wait_lets_exact_virtual_time_pass() -> None:
    passed, _ = stf("""
packet 0 000000000000 00 000000000000 000000000000 00000000
wait 5ms
packet 0 000000000000 00 000000000000 000000000000 00000000
register_read arrived 0 == 5002
wait
packet 0 000000000000 00 000000000000 000000000000 00000000
register_read arrived 0 == 5004
wait 3us
wait 1000ns
packet 0 000000000000 00 000000000000 000000000000 00000000
register_read arrived 0 == 5010
""")
    assert passed


@pytest.mark.parametrize(("line", "message"), [
    ("wait 5", "wait: bad duration '5'"),
    ("wait 5 ms", "wait: expected [DURATION]"),
    ("wait -5ms", "wait: bad duration '-5ms'"),
    ("wait 1.5ms", "wait: bad duration '1.5ms'"),
    ("wait 99999999999s", "longer than the timestamps' range"),
])
def test_bad_waits_are_located_errors(line: str, message: str) -> None:
    with pytest.raises(StfError, match=r"t.stf:2: error: ") as caught:
        parse_stf(f"packet 0 00\n{line}\n", "t.stf")
    assert message in str(caught.value)


def test_stf_command_takes_the_pass_cost(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    program = tmp_path / "loop.p4"
    program.write_text("#include <core.p4>\n#include <v1model.p4>\n" + LOOP)
    test = tmp_path / "loop.stf"
    test.write_text("packet 0 000000004E20 00 000000000000 000000000000 00000000\n"
                    "expect 1 000000004E20 00 000000000000 ************ ********$\n"
                    "register_read arrived 0 == 0\n")
    for cost in ("100", "1000", "100000"):
        assert main(["stf", "--pass-ns", cost, str(program), str(test)]) == 0
        assert f"PASS {test}" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["stf", "--pass-ns", "2000000000", str(program), str(test)])
    assert "at most 1000000000" in capsys.readouterr().err


def test_bmv2_sleeps_a_wait_and_refuses_one_past_its_packet_timeout(tmp_path: Path) -> None:
    stmts = parse_stf("packet 0 00\nwait 250ms\nwait\nwait 31s\n")
    assert [wait_s(s) for s in stmts] == [0.0, 0.25, 0.0, 31.0]
    with pytest.raises(Bmv2Error, match="line 4: a wait longer than 30 s"):
        Bmv2StfRun(tmp_path / "program.json", p4i.P4Info(), tmp_path).run(stmts)
