// Action profiles and selectors: accepted by the frontend and described in P4Info as p4c does
// (action_profiles with their tables, with_selector and size; implementation_id on the
// tables; selector keys are not match fields; a selector's size annotations become fields).
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> key;
    bit<8> flow;
    bit<8> result;
}
struct headers { h_t h; }
struct meta_t { }

parser ApParser(packet_in pkt, out headers hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control ApVerify(inout headers hdr, inout meta_t meta) { apply { } }

control ApIngress(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_out(bit<8> v) { hdr.h.result = v; }
    action_profile(32w128) members;
    @max_group_size(8) @selector_size_semantics("sum_of_members") @max_member_weight(4)
    action_selector(HashAlgorithm.crc16, 32w64, 32w16) balancer;
    table by_member {
        key = { hdr.h.key: exact; }
        actions = { set_out; NoAction; }
        implementation = members;
    }
    table by_group {
        key = {
            hdr.h.key: exact;
            hdr.h.flow: selector;
        }
        actions = { set_out; NoAction; }
        implementation = balancer;
    }
    apply {
        by_member.apply();
        by_group.apply();
        sm.egress_spec = 1;
    }
}

control ApEgress(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}
control ApCompute(inout headers hdr, inout meta_t meta) { apply { } }
control ApDeparser(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(ApParser(), ApVerify(), ApIngress(), ApEgress(), ApCompute(), ApDeparser()) main;
