/* Test program for the traffic manager and switch tests. A 32-byte control header says where a
 * packet goes (port, priority) and what it asks for (op); egress writes the queue metadata back
 * into the header so that tests can check it.
 * op: 1 I2E clone to session 5, 2 multicast group 1, 3 recirculate once, 4 resubmit once,
 *     5 drop, 6 E2E clone to session 5. */
#include <core.p4>
#include <v1model.p4>

header ctl_t {
    bit<8>  port;
    bit<8>  prio;
    bit<8>  op;
    bit<8>  seq;
    bit<32> enq_ts;
    bit<32> deq_td;
    bit<32> enq_qdepth;
    bit<32> deq_qdepth;
    bit<32> ingress_ts;
    bit<16> rid;
    bit<8>  itype;
    bit<8>  passes;
    bit<32> egress_ts;
}

struct headers {
    ctl_t ctl;
}

struct metadata {
    @field_list(0)
    bit<8> passes;
}

parser TmParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ctl);
        transition accept;
    }
}

control TmVerify(inout headers hdr, inout metadata meta) {
    apply { }
}

control TmIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        meta.passes = meta.passes + 1;
        hdr.ctl.passes = meta.passes;
        sm.egress_spec = (bit<9>) hdr.ctl.port;
        sm.priority = (bit<3>) hdr.ctl.prio;
        if (meta.passes == 1) {
            hdr.ctl.ingress_ts = (bit<32>) sm.ingress_global_timestamp;
        }
        if (hdr.ctl.op == 1) {
            clone(CloneType.I2E, 5);
        } else if (hdr.ctl.op == 2) {
            sm.mcast_grp = 1;
        } else if (hdr.ctl.op == 4 && meta.passes == 1) {
            resubmit_preserving_field_list(0);
        } else if (hdr.ctl.op == 5) {
            mark_to_drop(sm);
        }
    }
}

control TmEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hdr.ctl.enq_ts = sm.enq_timestamp;
        hdr.ctl.deq_td = sm.deq_timedelta;
        hdr.ctl.enq_qdepth = (bit<32>) sm.enq_qdepth;
        hdr.ctl.deq_qdepth = (bit<32>) sm.deq_qdepth;
        hdr.ctl.rid = sm.egress_rid;
        hdr.ctl.itype = (bit<8>) sm.instance_type;
        hdr.ctl.egress_ts = (bit<32>) sm.egress_global_timestamp;
        if (hdr.ctl.op == 3 && hdr.ctl.passes == 1) {
            recirculate_preserving_field_list(0);
        }
        if (hdr.ctl.op == 6 && sm.instance_type == 0) {
            clone(CloneType.E2E, 5);
        }
    }
}

control TmCompute(inout headers hdr, inout metadata meta) {
    apply { }
}

control TmDeparser(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr.ctl);
    }
}

V1Switch(TmParser(), TmVerify(), TmIngress(), TmEgress(), TmCompute(), TmDeparser()) main;
