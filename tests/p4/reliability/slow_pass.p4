/* Reliability test program: a frame whose first byte is 1 makes ingress loop for about 4e9
 * iterations (hours in any software switch); any other frame goes out of the port named by its
 * second byte. */
#include <core.p4>
#include <v1model.p4>

header ctl_t {
    bit<8> spin;
    bit<8> port;
}

struct headers {
    ctl_t ctl;
}

struct metadata {
    bit<32> sum;
}

parser SlowParser(packet_in pkt, out headers hdr, inout metadata meta,
                  inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ctl);
        transition accept;
    }
}

control SlowVerify(inout headers hdr, inout metadata meta) {
    apply { }
}

control SlowIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = (bit<9>) hdr.ctl.port;
        if (hdr.ctl.spin == 1) {
            bit<32> sum = 0;
            for (bit<32> i = 0; i < 32w0xFFFFFFFF; i = i + 1) {
                sum = sum + i;
            }
            meta.sum = sum;
        }
    }
}

control SlowEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { }
}

control SlowCompute(inout headers hdr, inout metadata meta) {
    apply { }
}

control SlowDeparser(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.ctl); }
}

V1Switch(SlowParser(), SlowVerify(), SlowIngress(), SlowEgress(), SlowCompute(),
         SlowDeparser()) main;
