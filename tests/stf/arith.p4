// Expressions: wraparound and saturating arithmetic, shifts (logical and arithmetic), bitwise
// and logical operators, concatenation, slices, casts (widen, truncate, signed), comparisons
// (unsigned and signed), the ternary operator, division and modulo.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<8>  b;
    bit<8>  add;
    bit<8>  sub;
    bit<8>  sadd;
    bit<8>  ssub;
    bit<8>  mul;
    bit<8>  shl;
    bit<8>  shr;
    bit<8>  band;
    bit<8>  bor;
    bit<8>  bxor;
    bit<8>  bnot;
    bit<8>  neg;
    bit<16> cat;
    bit<4>  hi;
    bit<4>  lo;
    bit<8>  cmp;
    bit<8>  tern;
    bit<8>  div;
    bit<8>  mod;
    bit<8>  sshr;
    bit<16> wide;
    bit<4>  trunc;
    bit<4>  pad;
}

struct headers { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control Ing(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        bit<8> a = hdr.h.a;
        bit<8> b = hdr.h.b;
        hdr.h.add = a + b;
        hdr.h.sub = a - b;
        hdr.h.sadd = a |+| b;
        hdr.h.ssub = a |-| b;
        hdr.h.mul = a * b;
        hdr.h.shl = a << 3;
        hdr.h.shr = a >> 2;
        hdr.h.band = a & b;
        hdr.h.bor = a | b;
        hdr.h.bxor = a ^ b;
        hdr.h.bnot = ~a;
        hdr.h.neg = -a;
        hdr.h.cat = a ++ b;
        hdr.h.hi = a[7:4];
        hdr.h.lo = b[3:0];
        hdr.h.cmp = (bit<1>)(a < b) ++ (bit<1>)(a <= b) ++ (bit<1>)(a > b) ++ (bit<1>)(a >= b)
                    ++ (bit<1>)(a == b) ++ (bit<1>)(a != b) ++ (bit<1>)((int<8>)a < (int<8>)b)
                    ++ (bit<1>)(a > b && b != 0 || false);
        hdr.h.tern = a > b ? a : b;
        hdr.h.div = a / 4;
        hdr.h.mod = a % 4;
        hdr.h.sshr = (bit<8>)((int<8>)a >> 2);
        hdr.h.wide = (bit<16>)a + 1;
        hdr.h.trunc = (bit<4>)a;
        sm.egress_spec = 1;
    }
}

control Eg(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control Vck(inout headers hdr, inout meta_t meta) { apply { } }
control Cck(inout headers hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), Vck(), Ing(), Eg(), Cck(), D()) main;
