/* What P4Runtime exercises use, all through the CPU port: PacketOut/PacketIn metadata, a table
 * with idle timeout whose misses send a digest, a counter, a meter, a multicast group and a
 * clone session. packet_out.op picks the feature; every copy returns as a PacketIn whose
 * metadata tells what happened (op, egress_rid, instance_type, meter color). */
#include <core.p4>
#include <v1model.p4>

const bit<9> CPU_PORT = 255;
const bit<8> OP_LEARN = 1;
const bit<8> OP_MULTICAST = 2;
const bit<8> OP_CLONE = 3;
const bit<8> OP_METER = 4;

@controller_header("packet_out")
header packet_out_t {
    bit<8> op;
    bit<8> pad;
}

@controller_header("packet_in")
header packet_in_t {
    bit<8>  op;
    bit<16> rid;
    bit<8>  instance_type;
    bit<8>  color;
    bit<8>  hit;
}

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct learn_t {
    bit<48> srcAddr;
    bit<8>  op;
}

struct metadata {
    @field_list(1)
    bit<8> op;
    bit<8> color;
    bit<8> hit;
}

struct headers {
    packet_in_t  packet_in;
    packet_out_t packet_out;
    ethernet_t   ethernet;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t sm) {
    state start {
        packet.extract(hdr.packet_out);
        meta.op = hdr.packet_out.op;
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    counter(8, CounterType.packets_and_bytes) op_counter;
    meter(8, MeterType.packets) op_meter;

    action known() {
        meta.hit = 1;
    }
    action learn() {
        digest<learn_t>(1, { hdr.ethernet.srcAddr, meta.op });
    }
    table flows {
        key = { hdr.ethernet.srcAddr: exact; }
        actions = { known; learn; }
        default_action = learn();
        support_timeout = true;
    }
    apply {
        op_counter.count((bit<32>) meta.op);
        sm.egress_spec = CPU_PORT;
        hdr.packet_out.setInvalid();
        if (meta.op == OP_LEARN) {
            flows.apply();
        } else if (meta.op == OP_MULTICAST) {
            sm.mcast_grp = 1;
        } else if (meta.op == OP_CLONE) {
            clone_preserving_field_list(CloneType.I2E, 5, 1);
        } else if (meta.op == OP_METER) {
            bit<2> color;
            op_meter.execute_meter((bit<32>) 0, color);
            meta.color = (bit<8>) color;
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hdr.packet_in.setValid();
        hdr.packet_in.op = meta.op;
        hdr.packet_in.rid = sm.egress_rid;
        hdr.packet_in.instance_type = (bit<8>) sm.instance_type;
        hdr.packet_in.color = meta.color;
        hdr.packet_in.hit = meta.hit;
    }
}

control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.packet_in);
        packet.emit(hdr.ethernet);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
