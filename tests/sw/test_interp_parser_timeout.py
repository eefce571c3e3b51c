"""A parser that loops without consuming input ends with error.ParserTimeout after a bounded
number of state transitions per packet (configurable); ingress still runs."""

from __future__ import annotations

import pytest
from test_interp_helpers import load, send, v1switch

from lgkit.cli import main

PROGRAM = """
header h_t { bit<8> kind; bit<8> err; }
struct headers { h_t h; }
struct metadata { }
parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.kind) { 1: spin; 2: s0; default: accept; }
    }
    state spin { transition spin; }
    state s0 { transition s1; }
    state s1 { transition s2; }
    state s2 { transition s3; }
    state s3 { transition accept; }
}
control MyVerify(inout headers hdr, inout metadata meta) { apply { } }
control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        if (sm.parser_error == error.ParserTimeout) { hdr.h.err = 0xEE; }
        else if (sm.parser_error == error.NoError) { hdr.h.err = 0x00; }
        else { hdr.h.err = 0x11; }
        sm.egress_spec = 1;
    }
}
control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { }
}
control MyCompute(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
""" + v1switch()


def test_a_state_loop_times_out_and_ingress_runs() -> None:
    pipeline = load(PROGRAM)
    assert send(pipeline, 0, bytes([1, 0, 0x99])) == [(1, bytes([1, 0xEE, 0x99]))]
    assert send(pipeline, 0, bytes([0, 0])) == [(1, bytes([0, 0]))]


def test_the_bound_counts_transitions_per_packet_and_is_configurable() -> None:
    pipeline = load(PROGRAM)
    pipeline.max_parser_transitions = 5  # start, s0..s3: five states
    assert send(pipeline, 0, bytes([2, 0])) == [(1, bytes([2, 0x00]))]
    assert send(pipeline, 0, bytes([2, 0])) == [(1, bytes([2, 0x00]))]  # a fresh budget
    pipeline.max_parser_transitions = 4
    assert send(pipeline, 0, bytes([2, 0])) == [(1, bytes([2, 0xEE]))]
    with pytest.raises(ValueError):
        pipeline.max_parser_transitions = 0


def test_stf_takes_the_bound(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    p4 = tmp_path / "loop.p4"
    p4.write_text("#include <core.p4>\n#include <v1model.p4>\n" + PROGRAM)
    stf = tmp_path / "loop.stf"
    stf.write_text("packet 0 01 00\nexpect 1 01 EE$\npacket 0 02 00\nexpect 1 02 EE$\n")
    assert main(["stf", str(p4), str(stf), "--max-parser-transitions", "3"]) == 0
    assert main(["stf", str(p4), str(stf)]) == 1  # without the bound, kind 2 parses fine
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["stf", str(p4), str(stf), "--max-parser-transitions", "0"])
    assert "must be at least 1" in capsys.readouterr().err


def test_switch_takes_the_bound_for_every_program_it_installs() -> None:
    from lgkit.cli import build_parser
    from lgkit.sw.switch.switch import Switch
    from lgkit.sw.switch.switch_main import UsageError, resolve_options

    def options(line: str):
        return resolve_options(build_parser("switch").parse_args(["switch", *line.split()]))

    assert options("prog.json --max-parser-transitions 3").max_parser_transitions == 3
    assert options("prog.json -- --max-parser-transitions 4").max_parser_transitions == 4
    assert options("prog.json").max_parser_transitions is None  # the pipeline's default
    with pytest.raises(UsageError, match="at least 1"):
        options("prog.json --max-parser-transitions 0")
    switch = Switch(max_parser_transitions=3)
    for _ in range(2):  # a program pushed later (P4Runtime, switch-cli) gets the bound too
        pipeline = load(PROGRAM)
        switch.set_pipeline(pipeline)
        assert pipeline.max_parser_transitions == 3
        assert send(pipeline, 0, bytes([2, 0])) == [(1, bytes([2, 0xEE]))]
    default = load(PROGRAM)
    Switch().set_pipeline(default)
    assert send(default, 0, bytes([2, 0])) == [(1, bytes([2, 0x00]))]
