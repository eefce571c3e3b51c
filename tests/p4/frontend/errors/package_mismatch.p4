// expect: 11:38: parameter 'meta' of MyIngress has type struct other_t, expected struct meta_t
#include <core.p4>
#include <v1model.p4>
struct headers_t { }
struct meta_t { bit<8> x; }
struct other_t { bit<8> y; }
parser MyParser(packet_in b, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { transition accept; }
}
control MyVerify(inout headers_t h, inout meta_t m) { apply { } }
control MyIngress(inout headers_t h, inout other_t meta, inout standard_metadata_t sm) { apply { } }
control MyEgress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t h, inout meta_t m) { apply { } }
control MyDeparser(packet_out b, in headers_t h) { apply { } }
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
