// hash() with crc16 (CRC-16/ARC), crc32 (IEEE), csum16 (RFC 1071), xor16 and identity over
// field lists; base + (hash % max).
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<32> a;
    bit<16> b;
    bit<8>  c;
    bit<16> crc16;
    bit<32> crc32;
    bit<16> csum;
    bit<16> xor;
    bit<16> ident;
    bit<16> mod;
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
        sm.egress_spec = 1;
        hash(hdr.h.crc16, HashAlgorithm.crc16, 16w0, { hdr.h.a, hdr.h.b, hdr.h.c }, 32w65536);
        hash(hdr.h.crc32, HashAlgorithm.crc32, 32w0, { hdr.h.a, hdr.h.b, hdr.h.c },
             64w4294967296);
        hash(hdr.h.csum, HashAlgorithm.csum16, 16w0, { hdr.h.a, hdr.h.b }, 32w65536);
        hash(hdr.h.xor, HashAlgorithm.xor16, 16w0, { hdr.h.a, hdr.h.b }, 32w65536);
        hash(hdr.h.ident, HashAlgorithm.identity, 16w0, { hdr.h.b }, 32w65536);
        hash(hdr.h.mod, HashAlgorithm.crc32, 16w100, { hdr.h.a }, 32w7);
    }
}

control Eg(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control Vck(inout headers hdr, inout meta_t meta) { apply { } }
control Cck(inout headers hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), Vck(), Ing(), Eg(), Cck(), D()) main;
