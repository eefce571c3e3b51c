/* A minimal v1model program for the P4Runtime LG-writer test: one register, nothing else. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
struct headers_t { ethernet_t eth; }
struct meta_t { }

parser WParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
               inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; }
}
control WVerify(inout headers_t hdr, inout meta_t meta) { apply { } }
control WIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<32>>(16) cfg;
    apply {
        bit<32> port;
        cfg.read(port, 0);
        sm.egress_spec = (bit<9>)port;
    }
}
control WEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}
control WCompute(inout headers_t hdr, inout meta_t meta) { apply { } }
control WDeparser(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.eth); } }

V1Switch(WParser(), WVerify(), WIngress(), WEgress(), WCompute(), WDeparser()) main;
