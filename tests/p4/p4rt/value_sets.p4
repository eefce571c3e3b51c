// Parser value sets: `ports` (one bit<16> key) and `pairs` (a struct: exact type, ternary
// code) decide the parser's path; the path taken is written into the header.
#include <core.p4>
#include <v1model.p4>

header probe_t {
    bit<16> port;
    bit<8> code;
    bit<8> path;
}
struct pair_t {
    bit<16> port;
    @match(ternary) bit<8> code;
}
struct headers { probe_t p; }
struct meta_t { }

parser VsParser(packet_in pkt, out headers hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    value_set<bit<16>>(4) ports;
    value_set<pair_t>(2) pairs;
    state start {
        pkt.extract(hdr.p);
        transition select(hdr.p.port) { ports: in_ports; default: try_pairs; }
    }
    state try_pairs {
        transition select(hdr.p.port, hdr.p.code) { pairs: in_pairs; default: accept; }
    }
    state in_ports { hdr.p.path = 1; transition accept; }
    state in_pairs { hdr.p.path = 2; transition accept; }
}

control VsVerify(inout headers hdr, inout meta_t meta) { apply { } }
control VsIngress(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; }
}
control VsEgress(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}
control VsCompute(inout headers hdr, inout meta_t meta) { apply { } }
control VsDeparser(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.p); } }

V1Switch(VsParser(), VsVerify(), VsIngress(), VsEgress(), VsCompute(), VsDeparser()) main;
