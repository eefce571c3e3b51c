// Assignment order (P4 spec 12.1): the left side is evaluated to a location before the right
// side runs, so a call in a stack index sees the values from before the right side's calls;
// list and struct initialisers read their items left to right, each before a later item's
// call changes it.
#include <core.p4>
#include <v1model.p4>

header sel_t {
    bit<1> which;
    bit<7> unused;
    bit<8> x;
}
header slot_t { bit<8> v; }
header pair_t {
    bit<8> first;
    bit<8> second;
}

struct headers {
    sel_t sel;
    slot_t[2] slots;
    pair_t pair;
}
struct meta_t { }

bit<1> pick(in bit<1> w) {
    return w;
}

bit<8> clear_and_mark(inout bit<1> w) {
    w = 0;
    return 0xAA;
}

bit<8> bump(inout bit<8> x) {
    x = x + 1;
    return 0x55;
}

parser MyParser(packet_in pkt, out headers hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.sel);
        pkt.extract(hdr.slots.next);
        pkt.extract(hdr.slots.next);
        transition accept;
    }
}

control MyVerify(inout headers hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        // the slot is chosen by `which` before clear_and_mark() clears it
        hdr.slots[pick(hdr.sel.which)].v = clear_and_mark(hdr.sel.which);
        // first = x as read before bump() adds 1; second = bump's result
        hdr.pair = { hdr.sel.x, bump(hdr.sel.x) };
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}
control MyCompute(inout headers hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr.sel);
        pkt.emit(hdr.slots);
        pkt.emit(hdr.pair);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
