/* L3 (IPv4 longest prefix match) and L2 (destination MAC) forwarding. */
#ifndef LG_FORWARDING_P4
#define LG_FORWARDING_P4

control LgForwarding(inout headers_t hdr, inout metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    action drop() {
        mark_to_drop(standard_metadata);
    }

    action ipv4_forward(bit<48> dst_addr, bit<9> port) {
        standard_metadata.egress_spec = port;
        hdr.ethernet.src_addr = hdr.ethernet.dst_addr;
        hdr.ethernet.dst_addr = dst_addr;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    action l2_forward(bit<9> port) {
        standard_metadata.egress_spec = port;
    }

    action l2_flood(bit<16> group) {
        standard_metadata.mcast_grp = group;
    }

    table ipv4_lpm {
        key = { hdr.ipv4.dst_addr: lpm; }
        actions = { ipv4_forward; drop; NoAction; }
        size = 1024;
        default_action = NoAction();
    }

    table l2_fwd {
        key = { hdr.ethernet.dst_addr: exact; }
        actions = { l2_forward; l2_flood; drop; }
        size = 1024;
        default_action = drop();
    }

    apply {
        bool routed = false;
        if (hdr.ipv4.isValid()) {
            if (hdr.ipv4.ttl <= 1) {
                drop();
                return;
            }
            routed = ipv4_lpm.apply().hit;
        }
        if (!routed) {
            l2_fwd.apply();
        }
    }
}

#endif
