// const entries: exact, ternary with masks and don't-care, ranges, the first listed entry wins
// among overlapping ones; const default_action; actions with compile-time arguments.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> k1;
    bit<8> k2;
    bit<8> res;
    bit<8> port;
}

struct headers { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control Ing(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set(bit<8> v, bit<9> port) {
        hdr.h.res = v;
        sm.egress_spec = port;
    }
    action fallback() {
        hdr.h.res = 0xFF;
        sm.egress_spec = 3;
    }

    table t_exact {
        key = { hdr.h.k1: exact; }
        actions = { set; fallback; }
        const entries = {
            0x01: set(0x11, 1);
            0x02: set(0x22, 2);
        }
        const default_action = fallback();
    }
    table t_mixed {
        key = {
            hdr.h.k1: ternary;
            hdr.h.k2: range;
        }
        actions = { set; fallback; }
        const entries = {
            (0x10 &&& 0xF0, 1 .. 10): set(0x31, 1);
            (0x1F, _): set(0x32, 2);
            (_, 5 .. 6): set(0x33, 2);
            (_, _): set(0x34, 1);
        }
        default_action = fallback();
    }

    apply {
        if (hdr.h.k1 < 0x10) {
            t_exact.apply();
        } else {
            t_mixed.apply();
        }
        hdr.h.port = (bit<8>)sm.egress_spec;
    }
}

control Eg(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control Vck(inout headers hdr, inout meta_t meta) { apply { } }
control Cck(inout headers hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), Vck(), Ing(), Eg(), Cck(), D()) main;
