"""Assignments to nested slices (x[a:b][c:d] = v) and lookahead of a struct type."""

from __future__ import annotations

from test_interp_helpers import load, send, v1switch

PROGRAM = """
header h_t { bit<8> a; bit<8> b; bit<8> kind; bit<8> len; }
header out_t { bit<8> kind; bit<8> len; }
struct top_t { bit<8> kind; bit<8> len; }
struct headers { h_t h; out_t o; }
struct metadata { }
parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        top_t top = pkt.lookahead<top_t>();
        hdr.o.setValid();
        hdr.o.kind = top.kind;
        hdr.o.len = pkt.lookahead<top_t>().len;
        transition accept;
    }
}
control MyVerify(inout headers hdr, inout metadata meta) { apply { } }
control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.h.a[7:2][4:1] = 4w0;          // bits 6..3 of a
        bit<8> n = hdr.h.b;
        n[7:4][3:0][2:1] = 2w0b01;        // bits 6..5 of n
        hdr.h.b = n;
    }
}
control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { }
}
control MyCompute(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.h); pkt.emit(hdr.o); }
}
""" + v1switch()


def test_nested_slice_assignment_writes_the_composed_bits() -> None:
    pl = load(PROGRAM)
    [(port, out)] = send(pl, 0, bytes([0xFF, 0xFF, 0, 0, 0xAB, 0xCD]))
    assert port == 1
    assert out[0] == 0xFF & ~(0xF << 3)
    assert out[1] == (0xFF & ~(0x3 << 5)) | (0b01 << 5)


def test_lookahead_of_a_struct_reads_without_consuming() -> None:
    pl = load(PROGRAM)
    [(_, out)] = send(pl, 0, bytes([0, 0, 0, 0, 0xAB, 0xCD, 0xEF]))
    # h (4 bytes; ingress sets bit 5 of b), then o = the two looked-ahead bytes, then the
    # unconsumed payload
    assert out == bytes([0, 0x20, 0, 0, 0xAB, 0xCD, 0xAB, 0xCD, 0xEF])
