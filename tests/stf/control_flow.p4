// Control flow: functions with return values, out/inout arguments and copy-in/copy-out,
// nested if/else, return in an action and in apply, exit (egress still runs after an ingress
// exit), direct action calls with arguments.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> op;
    bit<8> x;
    bit<8> y;
    bit<8> trace;
    bit<8> eg;
}

struct headers { h_t h; }
struct meta_t { }

bit<8> max8(in bit<8> a, in bit<8> b) {
    if (a > b) {
        return a;
    }
    return b;
}

void swap(inout bit<8> a, inout bit<8> b) {
    bit<8> t = a;
    a = b;
    b = t;
}

void first_or_zero(in bool take, in bit<8> v, out bit<8> r) {
    r = 0;
    if (take) {
        r = v;
        return;
    }
}

parser P(packet_in pkt, out headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control Ing(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action mark(bit<8> v) {
        hdr.h.trace = hdr.h.trace | v;
        if (v == 0x80) {
            return;
        }
        hdr.h.trace = hdr.h.trace | 0x40;
    }

    apply {
        sm.egress_spec = 1;
        bit<8> op = hdr.h.op;
        if (op == 1) {
            hdr.h.trace = max8(hdr.h.x, hdr.h.y);
        } else if (op == 2) {
            swap(hdr.h.x, hdr.h.y);
        } else if (op == 3 || op == 4) {
            first_or_zero(op == 3, hdr.h.x, hdr.h.trace);
        } else if (op == 5) {
            mark(0x01);
            mark(0x80);
        } else if (op == 6) {
            hdr.h.trace = 0x11;
            exit;
        } else if (op == 7) {
            hdr.h.trace = 0x22;
            return;
        } else {
            hdr.h.trace = 0xEE;
        }
        hdr.h.trace = hdr.h.trace + 1;
    }
}

control Eg(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { hdr.h.eg = 0xE0; }
}

control Vck(inout headers hdr, inout meta_t meta) { apply { } }
control Cck(inout headers hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), Vck(), Ing(), Eg(), Cck(), D()) main;
