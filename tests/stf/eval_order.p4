// Evaluation order: && and || skip their right operand (and its side effects) when the left
// one decides; ?: evaluates only the chosen branch; binary operators read the left operand
// before a call on the right changes it.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> sel;
    bit<8> a;
    bit<8> b;
    bit<8> c;
    bit<8> d;
    bit<8> e;
    bit<8> f;
    bit<8> g;
}

struct headers { h_t h; }
struct meta_t { }

bool touch(inout bit<8> x, in bool result) {
    x = x + 1;
    return result;
}

bit<8> bump(inout bit<8> x) {
    x = x + 10;
    return x;
}

parser P(packet_in pkt, out headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control Ing(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        bool left = hdr.h.sel[0:0] == 1;
        bool r;
        // a: incremented only when the left operand of && is true
        r = left && touch(hdr.h.a, true);
        // b: incremented only when the left operand of || is false
        r = left || touch(hdr.h.b, false);
        // c: nested: the inner && is skipped as a whole when !left
        r = (left && touch(hdr.h.c, true)) && touch(hdr.h.c, true);
        // d, e: only the chosen branch of ?: runs
        hdr.h.f = left ? bump(hdr.h.d) : bump(hdr.h.e);
        // g: the left operand is read before the call on the right changes it
        hdr.h.g = hdr.h.g + bump(hdr.h.g);
        if (r) {
            hdr.h.sel = hdr.h.sel | 0x80;
        }
    }
}

control Eg(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control Vfy(inout headers hdr, inout meta_t meta) { apply { } }
control Upd(inout headers hdr, inout meta_t meta) { apply { } }
control Dep(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), Vfy(), Ing(), Eg(), Upd(), Dep()) main;
