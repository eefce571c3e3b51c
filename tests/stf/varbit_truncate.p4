// varbit: two-argument extract with a run-time length, emit of a varbit header; truncate()
// applied at transmit to the deparsed packet.
#include <core.p4>
#include <v1model.p4>

header len_t { bit<8> n; }
header opt_t { varbit<64> data; }
header tail_t { bit<8> t; }

struct headers {
    len_t  len;
    opt_t  opt;
    tail_t tail;
}
struct meta_t { }

parser P(packet_in pkt, out headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.len);
        pkt.extract(hdr.opt, (bit<32>)hdr.len.n * 8);
        pkt.extract(hdr.tail);
        transition accept;
    }
}

control Ing(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.tail.t = hdr.tail.t + 1;
        if (hdr.len.n == 2) {
            truncate(3);
        }
    }
}

control Eg(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control Vck(inout headers hdr, inout meta_t meta) { apply { } }
control Cck(inout headers hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr.len);
        pkt.emit(hdr.opt);
        pkt.emit(hdr.tail);
    }
}

V1Switch(P(), Vck(), Ing(), Eg(), Cck(), D()) main;
