// Action profiles and selectors at run time: entries point at members or groups; a group picks
// its member by the selector's hash (crc32 over the two selector keys, 12 + 8 bits, packed as
// BMv2 packs a field list) modulo the group size, in member-handle order, as simple_switch.
// A miss runs no action: p4c's BMv2 backend drops the default_action of such tables.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  tag;
    bit<12> flow;
    bit<4>  pad;
    bit<8>  port;
    bit<8>  result;
    bit<8>  second;
}
struct headers { h_t h; }
struct meta_t { }

parser SelParser(packet_in pkt, out headers hdr, inout meta_t meta,
                 inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control SelVerify(inout headers hdr, inout meta_t meta) { apply { } }

control SelIngress(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_result(bit<8> v) { hdr.h.result = v; }
    action set_both(bit<8> v, bit<8> w) { hdr.h.result = v; hdr.h.second = w; }
    action mark(bit<8> w) { hdr.h.second = w; }
    action_profile(32w16) marks;
    action_selector(HashAlgorithm.crc32, 32w64, 32w16) balancer;
    table by_tag {
        key = { hdr.h.tag: ternary; }
        actions = { mark; NoAction; }
        default_action = mark(8w0x33);  // not run on a miss (BMv2)
        implementation = marks;
    }
    table spread {
        key = {
            hdr.h.tag: exact;
            hdr.h.flow: selector;
            hdr.h.port: selector;
        }
        actions = { set_result; set_both; NoAction; }
        implementation = balancer;
    }
    apply {
        by_tag.apply();
        spread.apply();
        sm.egress_spec = 1;
    }
}

control SelEgress(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}
control SelCompute(inout headers hdr, inout meta_t meta) { apply { } }
control SelDeparser(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(SelParser(), SelVerify(), SelIngress(), SelEgress(), SelCompute(), SelDeparser()) main;
