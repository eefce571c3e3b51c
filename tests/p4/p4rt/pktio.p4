/* P4Runtime test program: controller headers (packet-out / packet-in round trip through the
 * CPU port), a ternary table with a direct counter, a table with a direct meter, exact / range /
 * const / keyless tables, action scopes, an indirect counter, a register, a meter and a digest. */
#include <core.p4>
#include <v1model.p4>

const bit<9> CPU_PORT = 255;

@controller_header("packet_out")
header packet_out_t {
    bit<9> egress_port;
    bit<8> tag;
    bit<7> pad;
}

@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    bit<8> tag;
    bit<7> pad;
}

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct learn_t {
    bit<48> srcAddr;
    bit<9>  port;
}

struct metadata {
    bit<8>  tag;
    bit<2>  color;
    learn_t learn;
}

struct headers {
    packet_in_t  packet_in;
    packet_out_t packet_out;
    ethernet_t   ethernet;
}

parser PktParser(packet_in packet, out headers hdr, inout metadata meta,
                 inout standard_metadata_t sm) {
    state start {
        transition select(sm.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }
    state parse_packet_out {
        packet.extract(hdr.packet_out);
        transition parse_ethernet;
    }
    state parse_ethernet {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control PktVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control PktIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    direct_counter(CounterType.packets_and_bytes) acl_counter;
    counter(512, CounterType.packets_and_bytes) port_counter;
    register<bit<32>>(512) last_len;
    meter(16, MeterType.packets) port_meter;
    direct_meter<bit<2>>(MeterType.packets) src_meter;

    action drop() {
        mark_to_drop(sm);
    }

    action set_port(bit<9> port) {
        sm.egress_spec = port;
    }

    action set_tag(bit<8> tag) {
        meta.tag = tag;
    }

    action police() {
        src_meter.read(meta.color);
    }

    table acl {
        key = {
            hdr.ethernet.etherType: ternary;
            hdr.ethernet.srcAddr: ternary;
        }
        actions = { @tableonly set_port; drop; NoAction; }
        counters = acl_counter;
        default_action = NoAction();
        size = 64;
    }

    table dmac {
        key = {
            hdr.ethernet.dstAddr: exact;
        }
        actions = { set_port; drop; @defaultonly NoAction; }
        default_action = drop();
        size = 4;
    }

    table policer {
        key = {
            hdr.ethernet.srcAddr: exact;
        }
        actions = { police; NoAction; }
        meters = src_meter;
        default_action = NoAction();
    }

    table keyless {
        actions = { set_tag; NoAction; }
        default_action = NoAction();
    }

    table tagger {
        key = {
            sm.ingress_port: range;
        }
        actions = { set_tag; NoAction; }
        const default_action = NoAction();
    }

    table fixed {
        key = {
            hdr.ethernet.etherType: exact;
        }
        actions = { set_tag; NoAction; }
        const entries = {
            0x0801 : set_tag(1);
        }
    }

    apply {
        port_counter.count((bit<32>) sm.ingress_port);
        last_len.write((bit<32>) sm.ingress_port, sm.packet_length);
        if (hdr.packet_out.isValid()) {
            if (hdr.packet_out.egress_port == CPU_PORT) {
                hdr.packet_in.setValid();
                hdr.packet_in.ingress_port = sm.ingress_port;
                hdr.packet_in.tag = hdr.packet_out.tag + 1;
                hdr.packet_in.pad = 0;
            }
            sm.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
        } else {
            dmac.apply();
            acl.apply();
            policer.apply();
            if (meta.color == 2) {
                mark_to_drop(sm);
            }
            keyless.apply();
            fixed.apply();
            tagger.apply();
            if (hdr.ethernet.etherType == 0x88B5) {
                meta.learn.srcAddr = hdr.ethernet.srcAddr;
                meta.learn.port = sm.ingress_port;
                digest<learn_t>(1, meta.learn);
            }
            if (hdr.ethernet.etherType == 0x88B6) {
                sm.egress_spec = CPU_PORT;
                hdr.packet_in.setValid();
                hdr.packet_in.ingress_port = sm.ingress_port;
                hdr.packet_in.tag = 7;
                hdr.packet_in.pad = 0;
            }
        }
    }
}

control PktEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { }
}

control PktComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control PktDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.packet_in);
        packet.emit(hdr.ethernet);
    }
}

V1Switch(PktParser(), PktVerifyChecksum(), PktIngress(), PktEgress(), PktComputeChecksum(),
         PktDeparser()) main;
