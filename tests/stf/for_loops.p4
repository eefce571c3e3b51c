// for loops (P4 1.2.5): C-style with break/continue, for-in over a range, nested loops, and a
// return from inside a loop in a function.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  op;
    bit<8>  n;
    bit<16> r1;
    bit<16> r2;
}

struct headers { h_t h; }
struct meta_t { }

bit<8> first_multiple_of_3_above(in bit<8> start) {
    for (bit<8> i = start + 1; i != start; i = i + 1) {
        if (i % 3 == 0) {
            return i;
        }
    }
    return 0;
}

parser P(packet_in pkt, out headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control Ing(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action sum_odd_until_break() {
        // sum of the odd numbers below n, stopping at 11 at the latest
        hdr.h.r1 = 0;
        for (bit<8> i = 0; i < hdr.h.n; i = i + 1) {
            if (i == 11) {
                break;
            }
            if (i[0:0] == 0) {
                continue;
            }
            hdr.h.r1 = hdr.h.r1 + (bit<16>)i;
        }
    }
    action nested() {
        // pairs (i, j) with 1 <= i <= n and 0 <= j < i
        hdr.h.r1 = 0;
        for (bit<8> i in 1 .. hdr.h.n) {
            for (bit<8> j = 0; j < i; j = j + 1) {
                hdr.h.r1 = hdr.h.r1 + 1;
            }
        }
    }
    table t {
        key = { hdr.h.op : exact; }
        actions = { sum_odd_until_break; nested; NoAction; }
        const entries = {
            1 : sum_odd_until_break();
            2 : nested();
        }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        t.apply();
        hdr.h.r2 = (bit<16>)first_multiple_of_3_above(hdr.h.n);
        bit<8> k;
        for (k = 0; ; k = k + 2) {
            if (k >= hdr.h.n) { break; }
        }
        hdr.h.op = k;
    }
}

control Eg(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control Vfy(inout headers hdr, inout meta_t meta) { apply { } }
control Upd(inout headers hdr, inout meta_t meta) { apply { } }
control Dep(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), Vfy(), Ing(), Eg(), Upd(), Dep()) main;
