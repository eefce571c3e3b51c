// Header stacks: an int<W> index (a negative one is out of range and ends the block, as any
// out-of-range index does), and `for (T e in stack)`, which visits every element 0..size-1
// (valid or not) through a copy: writing e does not change the stack.
#include <core.p4>
#include <v1model.p4>

header sel_t {
    int<8> index;
    bit<8> sum;
    bit<8> valid_count;
}
header item_t { bit<8> v; }

struct headers {
    sel_t sel;
    item_t[3] items;
}
struct meta_t { }

parser MyParser(packet_in pkt, out headers hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.sel);
        pkt.extract(hdr.items.next);
        pkt.extract(hdr.items.next);
        transition accept;
    }
}

control MyVerify(inout headers hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        for (item_t e in hdr.items) {
            hdr.sel.sum = hdr.sel.sum + e.v;
            if (e.isValid()) {
                hdr.sel.valid_count = hdr.sel.valid_count + 1;
            }
            e.v = 0xFF;
        }
        hdr.items[hdr.sel.index].v = 0x99;
        hdr.sel.sum = hdr.sel.sum + 1;
    }
}

control MyEgress(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}
control MyCompute(inout headers hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr.sel);
        pkt.emit(hdr.items);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
