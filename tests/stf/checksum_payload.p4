// verify_checksum_with_payload / update_checksum_with_payload (csum16 over the listed fields
// followed by the payload, odd length padded with a zero byte); a failed verification sets
// standard_metadata.checksum_error without dropping.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<16> csum;
    bit<16> x;
    bit<8>  err;
}

struct headers { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control Vck(inout headers hdr, inout meta_t meta) {
    apply {
        verify_checksum_with_payload(hdr.h.isValid(), { hdr.h.x }, hdr.h.csum,
                                     HashAlgorithm.csum16);
    }
}

control Ing(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.h.err = (bit<8>)sm.checksum_error;
    }
}

control Cck(inout headers hdr, inout meta_t meta) {
    apply {
        update_checksum_with_payload(hdr.h.isValid(), { hdr.h.x }, hdr.h.csum,
                                     HashAlgorithm.csum16);
    }
}

control Eg(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), Vck(), Ing(), Eg(), Cck(), D()) main;
