"""The pipeline's drop port (simple_switch --drop-port): mark_to_drop and the end-of-pass
drop decisions follow `Pipeline.drop_port` instead of a fixed 511."""

from __future__ import annotations

from test_interp_helpers import load, send, v1switch

PROGRAM = """
header h_t { bit<8> op; bit<16> port; }
struct headers { h_t h; }
struct metadata { }
parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control MyVerify(inout headers hdr, inout metadata meta) { apply { } }
control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = (bit<9>)hdr.h.port;
        if (hdr.h.op == 1) { mark_to_drop(sm); }
        if (hdr.h.op == 2) { mark_to_drop(); }
    }
}
control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { if (hdr.h.op == 3) { mark_to_drop(sm); } }
}
control MyCompute(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
""" + v1switch()


def packet(op: int, port: int) -> bytes:
    return bytes([op]) + port.to_bytes(2, "big")


def test_default_drop_port_is_511() -> None:
    pl = load(PROGRAM)
    assert pl.drop_port == 511
    assert send(pl, 0, packet(0, 511)) == []
    assert send(pl, 0, packet(0, 7)) == [(7, packet(0, 7))]
    for op in (1, 2, 3):
        assert send(pl, 0, packet(op, 7)) == []


def test_a_configured_drop_port_replaces_511() -> None:
    pl = load(PROGRAM)
    pl.drop_port = 100
    # 511 is an ordinary port now, 100 drops
    assert send(pl, 0, packet(0, 511)) == [(511, packet(0, 511))]
    assert send(pl, 0, packet(0, 100)) == []
    # mark_to_drop (both forms, ingress and egress) uses the configured port
    for op in (1, 2, 3):
        assert send(pl, 0, packet(op, 7)) == []
