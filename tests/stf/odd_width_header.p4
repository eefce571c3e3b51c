// Headers whose width is not a multiple of 8 occupy whole bytes in the packet, as on BMv2
// (its compiler pads every such header type): extract consumes ceil(width/8) bytes, emit writes
// them with the padding bits zero, the bytes after the header stay payload, and packet_length
// grows by whole bytes when such a header is made valid.
#include <core.p4>
#include <v1model.p4>

header odd_t {
    bit<8>  tag;
    bit<16> val;
    bit<1>  flag;   // 25 bits: 4 bytes on the wire, 7 padding bits
}

header next_t {
    bit<8> x;
}

header added_t {
    bit<3> three;   // 3 bits: 1 byte on the wire
}

struct headers {
    odd_t   odd;
    next_t  nxt;
    added_t added;
}
struct meta_t { }

parser P(packet_in pkt, out headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.odd);
        transition select(hdr.odd.tag) {
            1: parse_next;
            default: accept;
        }
    }
    state parse_next {
        pkt.extract(hdr.nxt);
        transition accept;
    }
}

control Ing(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.odd.val = hdr.odd.val + 1;
        if (hdr.odd.tag == 2) {
            hdr.added.setValid();
            hdr.added.three = 5;
        }
    }
}

control Eg(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (hdr.added.isValid()) {
            hdr.odd.val = (bit<16>)sm.packet_length;  // counts the added header's whole byte
        }
    }
}
control Vfy(inout headers hdr, inout meta_t meta) { apply { } }
control Upd(inout headers hdr, inout meta_t meta) { apply { } }
control Dep(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr.added);
        pkt.emit(hdr.odd);
        pkt.emit(hdr.nxt);
    }
}

V1Switch(P(), Vfy(), Ing(), Eg(), Upd(), Dep()) main;
