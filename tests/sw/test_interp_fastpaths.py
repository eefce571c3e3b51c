"""The interpreter's fast paths give exactly the slow paths' results: csum16 on the integer,
registers and counters indexed inline (and after a reset), and the parse memo of recirculated
packets (which parsers qualify, hits, short packets, the transition bound)."""

from __future__ import annotations

import gc
import random

from test_interp_helpers import PRELUDE, load, send, v1switch

from lgkit.sim.scenario import compiled_program
from lgkit.sw.exec.interp.hashes import csum16, csum16_bits, pack_bits
from lgkit.sw.exec.interp.parsememo import memo_bytes
from lgkit.sw.lang import ir
from lgkit.sw.lang.frontend.compiler import compile_source


def test_csum16_on_the_integer_is_csum16_of_its_bytes() -> None:
    rng = random.Random(11)
    cases = [(0, 0), (0, 16), (0xFFFF, 16), (0xFFFF_FFFF, 32), (0x8000_7FFF, 32),
             (0x0001_FFFE, 32), (0xFFFF_0000, 32), (1, 1), (0x7F, 7)]
    for nbits in [*range(1, 70), 144, 160, 320]:
        cases += [(rng.getrandbits(nbits), nbits) for _ in range(50)]
        cases.append(((1 << nbits) - 1, nbits))
    for value, nbits in cases:
        assert csum16_bits(value, nbits) == csum16(pack_bits(value, nbits)), (value, nbits)


EXTERNS = """
header d_t { bit<8> op; bit<8> idx; bit<32> val; }
struct headers { d_t d; }
struct metadata { }
parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.d); transition accept; }
}
control MyVerify(inout headers hdr, inout metadata meta) { apply { } }
control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    register<bit<32>>(4) regs;
    counter(4, CounterType.packets_and_bytes) cnt;
    apply {
        if (hdr.d.op == 1) { regs.write((bit<32>)hdr.d.idx, hdr.d.val); }
        regs.read(hdr.d.val, (bit<32>)hdr.d.idx);
        cnt.count((bit<32>)hdr.d.idx);
        sm.egress_spec = 1;
    }
}
control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { }
}
control MyCompute(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.d); } }
""" + v1switch()


def test_registers_and_counters_inline_follow_resets_and_control_plane_writes() -> None:
    pipeline = load(EXTERNS)
    regs, cnt = pipeline.registers["MyIngress.regs"], pipeline.counters["MyIngress.cnt"]
    assert send(pipeline, 0, bytes([1, 2]) + (7).to_bytes(4, "big"))[0][1][2:] == bytes(
        [0, 0, 0, 7])
    assert regs.read(2) == 7 and cnt.read(2) == (1, 6)
    regs.reset()
    cnt.reset()
    regs.write(3, 9)
    assert send(pipeline, 0, bytes([0, 2, 0, 0, 0, 1]))[0][1][2:] == bytes(4)
    assert send(pipeline, 0, bytes([0, 3, 0, 0, 0, 1]))[0][1][2:] == bytes([0, 0, 0, 9])
    assert cnt.read(2) == (1, 6) and cnt.read(3) == (1, 6)
    assert send(pipeline, 0, bytes([0, 9, 0, 0, 0, 1]))[0][1][2:] == bytes([0, 0, 0, 1])
    assert any("out of range" in line for line in pipeline.logs)


MEMO = """
header a_t { bit<8> kind; bit<8> len; }
header b_t { bit<4> x; bit<12> y; }
header r_t { bit<8> pass; bit<8> err; bit<8> bval; }
struct headers { a_t a; b_t b; r_t r; }
struct metadata { @field_list(1) bit<8> pass; }
parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.a);
        transition select(hdr.a.kind, pkt.lookahead<bit<4>>()) {
            (1, 0xF): accept;
            (1, _): parse_b;
            default: accept;
        }
    }
    state parse_b { pkt.extract(hdr.b); transition accept; }
}
control MyVerify(inout headers hdr, inout metadata meta) { apply { } }
control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (sm.instance_type == 4) {
            hdr.r.setValid();
            hdr.r.pass = meta.pass;
            hdr.r.err = sm.parser_error == error.NoError ? 8w0 :
                        sm.parser_error == error.PacketTooShort ? 8w1 :
                        sm.parser_error == error.ParserTimeout ? 8w2 : 8w3;
            hdr.r.bval = hdr.b.isValid() ? (bit<8>)hdr.b.y : 8w0xEE;
        }
    }
}
control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        if (meta.pass == 0) {
            meta.pass = 1;
            recirculate_preserving_field_list(1);
        }
    }
}
control MyCompute(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.a); pkt.emit(hdr.b); pkt.emit(hdr.r); }
}
""" + v1switch()


def _memo(pipeline) -> dict:  # noqa: ANN001 - a Pipeline
    memos = [v for k, v in pipeline.code.ns.items() if k.startswith("_c") and isinstance(v, dict)]
    assert len(memos) == 1
    return memos[0]


def test_a_recirculated_packet_parsed_from_the_memo_gets_the_same_headers() -> None:
    pipeline = load(MEMO, engine="python")  # the memo is the Python engine's
    packets = [bytes([1, 2, 0x12, 0x34, 0xAA]), bytes([1, 2, 0xF2, 0x34]), bytes([2, 0, 0x55]),
               bytes([1, 2, 0x1])]
    first = [send(pipeline, 0, p) for p in packets]
    assert len(_memo(pipeline)) == len(packets)  # fresh packets are not remembered
    assert [send(pipeline, 0, p) for p in packets] == first  # every recirculation hits
    assert first[0] == [(1, bytes([1, 2, 0x12, 0x34, 1, 0, 0x34, 0xAA]))]
    assert first[1] == [(1, bytes([1, 2, 1, 0, 0xEE, 0xF2, 0x34]))]  # lookahead 0xF: no b
    assert first[3] == [(1, bytes([1, 2, 1, 1, 0xEE, 0x1]))]  # b cut short: PacketTooShort
    fresh = load(MEMO, engine="python")
    assert [send(fresh, 0, p) for p in packets] == first


def test_memo_entries_leave_the_garbage_collectors_walks() -> None:
    pipeline = load(MEMO, engine="python")
    for p in (bytes([1, 2, 0x12, 0x34, 0xAA]), bytes([2, 0, 0x55])):
        send(pipeline, 0, p)
    gc.collect()  # the collector untracks tuples of untracked values when it first sees them
    slots = [entry[0] for entry in _memo(pipeline).values()]
    assert slots and all(isinstance(s, tuple) and not gc.is_tracked(s) for s in slots)


def test_the_memo_is_not_used_past_a_lowered_transition_bound() -> None:
    pipeline = load(MEMO)
    packet = bytes([1, 2, 0x12, 0x34])
    before = send(pipeline, 0, packet)
    assert before == [(1, bytes([1, 2, 0x12, 0x34, 1, 0, 0x34]))]
    pipeline.max_parser_transitions = 1  # start alone: parse_b now times out
    assert send(pipeline, 0, packet) == [(1, bytes([1, 2, 1, 2, 0xEE, 0x12, 0x34]))]
    pipeline.max_parser_transitions = 100
    assert send(pipeline, 0, packet) == before


def _parser(source: str) -> ir.ParserDecl:
    program = compile_source(PRELUDE + source, "test.p4").ir
    return next(d for d in program.decls
                if isinstance(d, ir.ParserDecl) and d.name == "MyParser")


def _bytes(source: str) -> int | None:
    decl = _parser(source)
    return memo_bytes(decl, decl.params[1], decl.params[0])


def test_which_parsers_the_memo_takes() -> None:
    lg = compiled_program().ir
    lg_parser = next(d for d in lg.decls if isinstance(d, ir.ParserDecl) and d.name == "LgParser")
    assert memo_bytes(lg_parser, lg_parser.params[1], lg_parser.params[0]) == 14 + 3 + 3 + 2 + 20
    assert _bytes(MEMO) == 2 + 2  # a, then b (the lookahead is within b)
    on_metadata = MEMO.replace("select(hdr.a.kind, pkt.lookahead<bit<4>>())",
                               "select(hdr.a.kind, (bit<4>)sm.ingress_port)")
    assert _bytes(on_metadata) is None
    writes_metadata = MEMO.replace("pkt.extract(hdr.b);", "pkt.extract(hdr.b); meta.pass = 1;")
    assert _bytes(writes_metadata) is None
    loops = MEMO.replace("state parse_b { pkt.extract(hdr.b); transition accept; }",
                         "state parse_b { pkt.extract(hdr.b); transition start; }")
    assert _bytes(loops) is None
    head, rest = MEMO.split("parser MyParser")
    value_set = head + """parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t sm) {
    value_set<bit<4>>(4) vs;
    state start {
        pkt.extract(hdr.a);
        transition select(pkt.lookahead<bit<4>>()) { vs: parse_b; default: accept; }
    }
    state parse_b { pkt.extract(hdr.b); transition accept; }
}
""" + "control MyVerify" + rest.split("control MyVerify", 1)[1]
    assert _bytes(value_set) is None
