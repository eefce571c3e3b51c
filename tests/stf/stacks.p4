// Header stacks: extract into .next in a parser loop, select on .last, push_front/pop_front,
// indexing, lastIndex, emitting a whole stack, and the StackOutOfBounds parser error (which does
// not drop the packet: ingress runs and the unparsed bytes stay payload).
#include <core.p4>
#include <v1model.p4>

header e_t {
    bit<8> v;
    bit<8> more;
}

struct headers { e_t[4] s; }
struct meta_t { }

parser P(packet_in pkt, out headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.s.next);
        transition select(hdr.s.last.more) {
            0: accept;
            default: start;
        }
    }
}

control Ing(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (sm.parser_error == error.StackOutOfBounds) {
            hdr.s[3].more = 0xEE;
        } else if (hdr.s[0].v == 0xFF) {
            hdr.s.push_front(1);
            hdr.s[0].setValid();
            hdr.s[0].v = 0x11;
            hdr.s[0].more = 1;
        } else if (hdr.s[0].v == 0xEE) {
            hdr.s.pop_front(1);
        } else if (hdr.s[0].v == 0xDD) {
            hdr.s[1].v = (bit<8>)hdr.s.lastIndex;
        }
    }
}

control Eg(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control Vck(inout headers hdr, inout meta_t meta) { apply { } }
control Cck(inout headers hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.s); } }

V1Switch(P(), Vck(), Ing(), Eg(), Cck(), D()) main;
