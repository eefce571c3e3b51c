// Types: serializable enums in headers (including values that are not members), plain enums,
// typedef, constants, structs with named-field initialisers, tuples-as-lists, error, bool,
// int<W> sign extension through casts.
#include <core.p4>
#include <v1model.p4>

enum bit<8> Color_t {
    RED = 1,
    GREEN = 2,
    BLUE = 0x10
}
enum Mode { FAST, SLOW }
typedef bit<8> byte_t;
const byte_t MAGIC = 0x5A;

struct pair_t {
    byte_t lo;
    byte_t hi;
}

header h_t {
    Color_t color;
    byte_t  v;
    byte_t  res;
    byte_t  res2;
    bit<16> ext;
}

struct headers { h_t h; }
struct meta_t {
    bool   flag;
    int<8> signed_v;
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
        pair_t p = { lo = hdr.h.v, hi = MAGIC };
        Mode m = Mode.SLOW;
        if (hdr.h.color == Color_t.RED) {
            m = Mode.FAST;
        }
        meta.flag = m == Mode.FAST;
        if (meta.flag) {
            hdr.h.res = p.hi;
        } else {
            hdr.h.res = p.lo;
        }
        hdr.h.res2 = (bit<8>)hdr.h.color + 1;
        if (hdr.h.color == Color_t.BLUE) {
            hdr.h.color = Color_t.GREEN;
        }
        meta.signed_v = (int<8>)hdr.h.v;
        hdr.h.ext = (bit<16>)(int<16>)meta.signed_v;
        if (sm.parser_error != error.NoError) {
            hdr.h.res = 0xEE;
        }
    }
}

control Eg(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control Vck(inout headers hdr, inout meta_t meta) { apply { } }
control Cck(inout headers hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), Vck(), Ing(), Eg(), Cck(), D()) main;
