"""Parser semantics: select (value, mask, range, tuple, default), stacks, varbit, lookahead,
verify, advance, reject, and BMv2's behaviour after a parser error."""

from __future__ import annotations

import pytest
from test_interp_helpers import load, send, v1switch

PROGRAM = """
error { BadSub }
header two_t { bit<8> kind; bit<8> sub; }
header h8_t { bit<8> v; }
header opt_t { bit<8> len; varbit<32> data; }
header out_t { bit<8> path; bit<8> err; bit<8> look; bit<8> last; }
struct headers { out_t r; two_t e; h8_t[3] stk; opt_t o; h8_t tail; }
struct metadata { bit<8> look; bit<8> path; }

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.e);
        transition select(hdr.e.kind, hdr.e.sub) {
            (0x10 &&& 0xF0, _): masked;
            (0x20 .. 0x2F, 1): ranged;
            (0x30, _): parse_stack;
            (0x40, _): varb;
            (0x50, _): look;
            (0x60, _): verif;
            (0x70, _): adv;
            (0x80, _): rej;
            (0x90, 2): nomatch;
            (0xA0, _): advvar;
            default: accept;
        }
    }
    state masked { meta.path = 1; transition accept; }
    state ranged { meta.path = 2; transition accept; }
    state parse_stack {
        pkt.extract(hdr.stk.next);
        transition select(hdr.stk.last.v) { 0: accept; default: parse_stack; }
    }
    state varb {
        pkt.extract(hdr.o, (bit<32>)hdr.e.sub << 3);
        transition accept;
    }
    state look {
        meta.look = pkt.lookahead<bit<8>>();
        pkt.extract(hdr.tail);
        transition accept;
    }
    state verif {
        verify(hdr.e.sub == 5, error.BadSub);
        meta.path = 6;
        transition accept;
    }
    state adv { pkt.advance(16); pkt.extract(hdr.tail); transition accept; }
    state rej { meta.path = 8; transition reject; }
    state advvar { pkt.advance((bit<32>)hdr.e.sub); pkt.extract(hdr.tail); transition accept; }
    state nomatch {
        meta.path = 9;
        transition select(hdr.e.sub) { 1: accept; }
    }
}
control MyVerify(inout headers hdr, inout metadata meta) { apply { } }
control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hdr.r.setValid();
        hdr.r.path = meta.path;
        hdr.r.look = meta.look;
        hdr.r.last = (bit<8>)hdr.stk.lastIndex;
        if (sm.parser_error == error.NoError) { hdr.r.err = 0; }
        else if (sm.parser_error == error.PacketTooShort) { hdr.r.err = 1; }
        else if (sm.parser_error == error.StackOutOfBounds) { hdr.r.err = 3; }
        else if (sm.parser_error == error.HeaderTooShort) { hdr.r.err = 4; }
        else if (sm.parser_error == error.BadSub) { hdr.r.err = 7; }
        else if (sm.parser_error == error.ParserInvalidArgument) { hdr.r.err = 6; }
        else { hdr.r.err = 0xEE; }
        sm.egress_spec = 3;
    }
}
control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { }
}
control MyCompute(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr.r); pkt.emit(hdr.e); pkt.emit(hdr.stk); pkt.emit(hdr.o); pkt.emit(hdr.tail);
    }
}
""" + v1switch()


@pytest.fixture(scope="module")
def pipeline():
    return load(PROGRAM)


def run(pipeline, hexdata: str) -> tuple[bytes, bytes]:
    """Returns (the 4-byte result header, the rest of the output)."""
    out = send(pipeline, 1, bytes.fromhex(hexdata))
    assert len(out) == 1 and out[0][0] == 3
    return out[0][1][:4], out[0][1][4:]


@pytest.mark.parametrize(
    ("packet", "result", "rest"),
    [
        ("1309aa", "010000ff", "1309aa"),  # mask 0x1X
        ("2501aa", "020000ff", "2501aa"),  # range and tuple
        ("2502aa", "000000ff", "2502aa"),  # range matches but sub does not -> default
        ("300506 00 77", "00000001", "3005060077"),  # stack until a zero element
        ("504243", "000043ff", "504243"),  # lookahead then extract of the same byte
        ("6005 aa", "060000ff", "6005aa"),  # verify passes
        ("7000 1111 55 66", "000000ff", "70005566"),  # advance skips two bytes
        ("8000 aa", "080000ff", "8000aa"),  # transition reject: ends like accept, no error
        ("9002 aa", "090000ff", "9002aa"),  # select without match: ends like accept
        ("4002 ff 1234 99", "000000ff", "4002ff123499"),  # varbit of 2 bytes
        ("A010 1122 33", "000000ff", "a01033"),  # advance by a whole number of bytes
    ],
)
def test_parser_paths(pipeline, packet: str, result: str, rest: str) -> None:
    got_result, got_rest = run(pipeline, packet.replace(" ", ""))
    assert got_result.hex() == result
    assert got_rest.hex() == rest


@pytest.mark.parametrize(
    ("packet", "result", "rest"),
    [
        ("30 05 06 07 08 09", "00030002", "30050607" "0809"),  # stack overflow: payload kept
        ("50", "000100ff", "50"),  # truncated header: extract of `e` fails
        ("5000", "000100ff", "5000"),  # lookahead past the end
        ("6006 aa", "000700ff", "6006aa"),  # verify fails with a user error
        ("4005 ff 1122334455", "000400ff", "4005ff1122334455"),  # varbit longer than max
        ("7000 11", "000100ff", "700011"),  # advance past the end
        ("30 05 06 07 08", "00030002", "3005060708"),  # full stack before too short
        ("A00C 1122", "000600ff", "a00c1122"),  # advance by 12 bits: BMv2 rejects it
        ("4003 ff 1122", "000100ff", "4003ff1122"),  # varbit: too short is checked first
        ("4005 ff 11", "000100ff", "4005ff11"),  # too short even though also too long
    ],
)
def test_parser_errors_keep_payload_and_run_ingress(
    pipeline, packet: str, result: str, rest: str
) -> None:
    got_result, got_rest = run(pipeline, packet.replace(" ", ""))
    assert got_result.hex() == result
    assert got_rest.hex() == rest
