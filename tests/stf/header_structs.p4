// Structs nested in headers (P4 1.2.2): a header field may be a struct of bit<W>, int<W>,
// bool and serializable enums, nested again; on the wire its fields are the header's bits in
// declaration order, and they are read and written by member paths.
#include <core.p4>
#include <v1model.p4>

enum bit<4> Color { RED = 1, GREEN = 2 }

struct nibbles_t {
    bit<4> hi;
    bit<4> lo;
}
struct tagged_t {
    Color color;
    bit<4> level;
    nibbles_t pair;
}

header outer_t {
    bit<8> first;
    tagged_t tag;
    int<8> last;
}

struct headers { outer_t o; }
struct meta_t { }

parser MyParser(packet_in pkt, out headers hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.o); transition accept; }
}

control MyVerify(inout headers hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (hdr.o.tag.color == Color.RED) {
            hdr.o.tag.color = Color.GREEN;
        }
        hdr.o.tag.pair = { hdr.o.tag.pair.lo, hdr.o.tag.pair.hi };
        hdr.o.first = (bit<8>)hdr.o.tag.level + 1;
        hdr.o.last = hdr.o.last - 1;
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}
control MyCompute(inout headers hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.o); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
