/* Exercise "p4runtime": a tunnel that the controller sets up. An IPv4 packet entering the
 * tunnel gets the tunnel header (ipv4_lpm -> tunnel_ingress); inside, tunnel_exact forwards by
 * dst_id or strips the header at the last hop (tunnel_egress). Counters count per tunnel. */
#include "../common.p4h"

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    counter(1024, CounterType.packets_and_bytes) ingressTunnelCounter;
    counter(1024, CounterType.packets_and_bytes) egressTunnelCounter;

    action drop() {
        mark_to_drop(standard_metadata);
    }
    action tunnel_ingress(bit<16> dst_id) {
        hdr.tunnel.setValid();
        hdr.tunnel.dst_id = dst_id;
        hdr.tunnel.proto_id = hdr.ethernet.etherType;
        hdr.ethernet.etherType = TYPE_TUNNEL;
        ingressTunnelCounter.count((bit<32>) dst_id);
    }
    action tunnel_forward(bit<9> port) {
        standard_metadata.egress_spec = port;
    }
    action tunnel_egress(bit<48> dstAddr, bit<9> port) {
        standard_metadata.egress_spec = port;
        hdr.ethernet.dstAddr = dstAddr;
        hdr.ethernet.etherType = hdr.tunnel.proto_id;
        egressTunnelCounter.count((bit<32>) hdr.tunnel.dst_id);
        hdr.tunnel.setInvalid();
    }
    table ipv4_lpm {
        key = { hdr.ipv4.dstAddr: lpm; }
        actions = { tunnel_ingress; drop; NoAction; }
        size = 1024;
        default_action = NoAction();
    }
    table tunnel_exact {
        key = { hdr.tunnel.dst_id: exact; }
        actions = { tunnel_forward; tunnel_egress; drop; }
        size = 1024;
        default_action = drop();
    }
    apply {
        if (hdr.ipv4.isValid() && !hdr.tunnel.isValid()) {
            ipv4_lpm.apply();
        }
        if (hdr.tunnel.isValid()) {
            tunnel_exact.apply();
        } else {
            drop();
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply { }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
