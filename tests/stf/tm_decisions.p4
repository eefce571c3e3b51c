// Traffic-manager decisions: unicast, mark_to_drop and the drop port (ingress and egress),
// multicast replication with egress_rid, I2E and E2E clones through clone sessions (and an
// unconfigured session, and a clone preserving a field list), resubmit and recirculate with
// preserved field lists, instance_type.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> op;
    bit<8> ity_in;
    bit<8> ity_eg;
    bit<8> rid;
    bit<8> port;
    bit<8> count;
}

struct headers { h_t h; }
struct meta_t {
    @field_list(1)
    bit<8> count;
}

parser P(packet_in pkt, out headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control Ing(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.h.ity_in = (bit<8>)sm.instance_type;
        sm.egress_spec = 1;
        bit<8> op = hdr.h.op;
        if (op == 0x01) {
            sm.egress_spec = 2;
        } else if (op == 0x02) {
            mark_to_drop(sm);
        } else if (op == 0x03) {
            sm.egress_spec = 511;
        } else if (op == 0x04) {
            sm.mcast_grp = 1;
        } else if (op == 0x05) {
            sm.mcast_grp = 1;
            mark_to_drop(sm);
        } else if (op == 0x06) {
            sm.egress_spec = 511;
            sm.mcast_grp = 1;
        } else if (op == 0x10) {
            clone(CloneType.I2E, 5);
            hdr.h.count = 0x77;
        } else if (op == 0x11) {
            clone(CloneType.I2E, 9);
        } else if (op == 0x12) {
            meta.count = 0x33;
            clone_preserving_field_list(CloneType.I2E, 5, 1);
        } else if (op == 0x30) {
            if (sm.instance_type == 0) {
                meta.count = 7;
                hdr.h.count = 0x55;
                resubmit_preserving_field_list(1);
            } else {
                hdr.h.count = meta.count;
            }
        } else if (op == 0x40 && sm.instance_type == 4) {
            hdr.h.count = meta.count;
        }
    }
}

control Eg(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.h.ity_eg = (bit<8>)sm.instance_type;
        hdr.h.rid = (bit<8>)sm.egress_rid;
        hdr.h.port = (bit<8>)sm.egress_port;
        if (sm.instance_type == 1 && meta.count != 0) {
            hdr.h.count = meta.count;
        }
        if (hdr.h.op == 0x20 && sm.instance_type == 0) {
            hdr.h.count = 0x99;
            clone(CloneType.E2E, 6);
        } else if (hdr.h.op == 0x40 && hdr.h.count == 0) {
            meta.count = 9;
            recirculate_preserving_field_list(1);
        } else if (hdr.h.op == 0x50) {
            mark_to_drop(sm);
        }
    }
}

control Vck(inout headers hdr, inout meta_t meta) { apply { } }
control Cck(inout headers hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), Vck(), Ing(), Eg(), Cck(), D()) main;
