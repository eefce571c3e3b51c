// Parser: tuple select keys with value, mask (&&&), range (..), don't-care and default cases;
// lookahead, advance, verify with a user error, parser-local variables and metadata.
#include <core.p4>
#include <v1model.p4>

error { BadValue }

header h_t {
    bit<8> kind;
    bit<8> val;
}
header p_t { bit<16> data; }

struct headers {
    h_t h;
    p_t p;
}
struct meta_t { bit<8> path; }

parser P(packet_in pkt, out headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.kind, hdr.h.val) {
            (0x01, _): s_value;
            (0x10 &&& 0xF0, _): s_mask;
            (0x20 .. 0x2F, _): s_range;
            (0x30, 0x01): s_look;
            (0x40, _): s_verify;
            (0x50, _): s_advance;
            default: accept;
        }
    }
    state s_value {
        meta.path = 1;
        transition accept;
    }
    state s_mask {
        meta.path = 2;
        transition accept;
    }
    state s_range {
        meta.path = 3;
        transition accept;
    }
    state s_look {
        bit<16> peek = pkt.lookahead<bit<16>>();
        meta.path = peek[7:0];
        pkt.extract(hdr.p);
        transition accept;
    }
    state s_verify {
        verify(hdr.h.val == 0, error.BadValue);
        meta.path = 4;
        transition accept;
    }
    state s_advance {
        pkt.advance(16);
        meta.path = 5;
        transition accept;
    }
}

control Ing(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.h.val = meta.path;
        if (sm.parser_error == error.BadValue) {
            hdr.h.val = 0xEB;
        }
    }
}

control Eg(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control Vck(inout headers hdr, inout meta_t meta) { apply { } }
control Cck(inout headers hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr.h);
        pkt.emit(hdr.p);
    }
}

V1Switch(P(), Vck(), Ing(), Eg(), Cck(), D()) main;
