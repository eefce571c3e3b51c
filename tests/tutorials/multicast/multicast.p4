/* Exercise "multicast": L2 forwarding by destination MAC; broadcast frames go to multicast
 * group 1, and egress drops the copy that would return to the sender's port. */
#include "../common.p4h"

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action drop() {
        mark_to_drop(standard_metadata);
    }
    action mac_forward(bit<9> port) {
        standard_metadata.egress_spec = port;
    }
    action flood() {
        standard_metadata.mcast_grp = 1;
    }
    table mac_lookup {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { mac_forward; flood; drop; }
        size = 1024;
        default_action = flood();
    }
    apply {
        mac_lookup.apply();
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.egress_port == standard_metadata.ingress_port) {
            mark_to_drop(standard_metadata);
        }
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
