"""A pass that runs more loop iterations than max_loop_iterations ends with its packet dropped
and one error naming the loop; loops within the bound are unaffected."""

from __future__ import annotations

import pytest
from test_interp_helpers import load, send, v1switch

from lgkit.cli import main

# hdr.h.n iterations in ingress (n = 0xFFFFFFFF: 2^32 - 1), then n * m in egress (nested).
PROGRAM = """
header h_t { bit<32> n; bit<16> m; bit<32> acc; }
struct headers { h_t h; }
struct metadata { }
parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control MyVerify(inout headers hdr, inout metadata meta) { apply { } }
control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hdr.h.acc = 0;
        for (bit<32> i = 0; i < hdr.h.n; i = i + 1) {
            hdr.h.acc = hdr.h.acc + 1;
        }
        sm.egress_spec = 1;
    }
}
control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        for (bit<16> j in 1 .. hdr.h.m) {
            for (bit<16> k in 1 .. hdr.h.m) {
                hdr.h.acc = hdr.h.acc + 1;
            }
        }
    }
}
control MyCompute(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
""" + v1switch()


def line_of(text: str, header_lines: int) -> int:
    """The line of `text` in PROGRAM once `header_lines` lines are put before it."""
    return next(i for i, x in enumerate(PROGRAM.splitlines(), 1) if text in x) + header_lines


OUTER = "for (bit<32> i"  # the ingress loop
INNER = "for (bit<16> k"  # the inner egress loop
PRELUDE_LINES = 3  # test_interp_helpers.PRELUDE


def frame(n: int, m: int = 0, acc: int = 0) -> bytes:
    return n.to_bytes(4, "big") + m.to_bytes(2, "big") + acc.to_bytes(4, "big")


def test_loops_within_the_bound_run_to_the_end() -> None:
    pipeline = load(PROGRAM)
    assert send(pipeline, 0, frame(5, 3)) == [(1, frame(5, 3, 5 + 9))]
    pipeline.max_loop_iterations = 8 + 9  # ingress and egress each have their own pass
    assert send(pipeline, 0, frame(8, 3)) == [(1, frame(8, 3, 17))]
    assert pipeline.logs == []


def test_a_loop_past_the_bound_ends_the_pass_and_drops_the_packet() -> None:
    pipeline = load(PROGRAM)
    assert send(pipeline, 0, frame(0xFFFFFFFF)) == []  # 2^32 - 1 iterations: stopped at 10^5
    assert pipeline.logs == [
        f"error: the loop at test.p4:{line_of(OUTER, PRELUDE_LINES)}:9 ran past 100000 "
        "iterations in one pass (max_loop_iterations); the pass ended and its packet was dropped"]
    assert send(pipeline, 0, frame(2)) == [(1, frame(2, 0, 2))]  # the next pass: a fresh budget


def test_the_bound_counts_every_loop_of_the_pass() -> None:
    pipeline = load(PROGRAM)
    pipeline.max_loop_iterations = 20  # m = 4: 4 outer + 16 inner iterations fit
    assert send(pipeline, 0, frame(0, 4)) == [(1, frame(0, 4, 16))]
    assert send(pipeline, 0, frame(0, 5)) == []  # 5 outer + 25 inner > 20
    assert pipeline.logs[0].startswith(
        f"error: the loop at test.p4:{line_of(INNER, PRELUDE_LINES)}:13 ran past 20 ")
    with pytest.raises(ValueError):
        pipeline.max_loop_iterations = 0


def test_stf_prints_the_bound_without_verbose(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    p4 = tmp_path / "loop.p4"
    p4.write_text("#include <core.p4>\n#include <v1model.p4>\n" + PROGRAM)
    stf = tmp_path / "loop.stf"
    stf.write_text(f"packet 0 {frame(0xFFFFFFFF).hex()}\n"
                   f"packet 0 {frame(1).hex()}\nexpect 1 {frame(1, 0, 1).hex()}\n")
    assert main(["stf", str(p4), str(stf)]) == 0
    out = capsys.readouterr()
    assert f"PASS {stf}" in out.out
    assert out.err.splitlines() == [
        f"error: the loop at {p4}:{line_of(OUTER, 2)}:9 ran past 100000 iterations in one pass "
        "(max_loop_iterations); the pass ended and its packet was dropped"]


def test_stf_and_the_switch_take_the_bound(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    from lgkit.cli import build_parser
    from lgkit.sw.switch.switch import Switch
    from lgkit.sw.switch.switch_main import UsageError, resolve_options

    p4 = tmp_path / "loop.p4"
    p4.write_text("#include <core.p4>\n#include <v1model.p4>\n" + PROGRAM)
    stf = tmp_path / "loop.stf"
    stf.write_text(f"packet 0 {frame(9).hex()}\nexpect 1 {frame(9, 0, 9).hex()}\n")
    assert main(["stf", str(p4), str(stf), "--max-loop-iterations", "9"]) == 0
    assert main(["stf", str(p4), str(stf), "--max-loop-iterations", "8"]) == 1
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["stf", str(p4), str(stf), "--max-loop-iterations", "0"])
    assert "must be at least 1" in capsys.readouterr().err

    def options(line: str):
        return resolve_options(build_parser("switch").parse_args(["switch", *line.split()]))

    assert options("prog.json --max-loop-iterations 3").max_loop_iterations == 3
    assert options("prog.json").max_loop_iterations is None  # the pipeline's default
    with pytest.raises(UsageError, match="at least 1"):
        options("prog.json --max-loop-iterations 0")
    pipeline = load(PROGRAM)
    Switch(max_loop_iterations=3).set_pipeline(pipeline)
    assert send(pipeline, 0, frame(4)) == []
