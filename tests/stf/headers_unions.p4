// Header validity: isValid/setValid/setInvalid, emit skipping invalid headers, setValid zeroing
// fields, header unions (one member valid at a time; union isValid), header assignment.
#include <core.p4>
#include <v1model.p4>

header a_t { bit<8> x; }
header b_t { bit<8> y; }
header_union u_t {
    a_t a;
    b_t b;
}

struct headers {
    a_t first;
    b_t second;
    b_t extra;
    u_t u;
}
struct meta_t { }

parser P(packet_in pkt, out headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.first);
        transition select(hdr.first.x) {
            1: parse_a;
            2: parse_b;
            default: accept;
        }
    }
    state parse_a {
        pkt.extract(hdr.u.a);
        transition accept;
    }
    state parse_b {
        pkt.extract(hdr.u.b);
        transition accept;
    }
}

control Ing(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.first.x == 4) {
            hdr.second = { 0x44 };
            hdr.extra = hdr.second;
            exit;
        }
        if (hdr.u.a.isValid()) {
            hdr.extra.setValid();
            hdr.extra.y = hdr.u.a.x + 1;
        } else if (hdr.u.b.isValid()) {
            hdr.u.a.setValid();
            hdr.u.a.x = 0xAA;
        }
        if (!hdr.u.isValid()) {
            hdr.second.setValid();
            hdr.second.y = 0x55;
            hdr.first.setInvalid();
        }
    }
}

control Eg(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control Vck(inout headers hdr, inout meta_t meta) { apply { } }
control Cck(inout headers hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr.first);
        pkt.emit(hdr.second);
        pkt.emit(hdr.extra);
        pkt.emit(hdr.u);
    }
}

V1Switch(P(), Vck(), Ing(), Eg(), Cck(), D()) main;
