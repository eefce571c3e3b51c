// Applying a control type directly (`Type.apply(args)`, as p4c allows): an instance without
// constructor arguments, named after the type, so its table is "MyIngress.Rewrite.by_port"
// in P4Info and in STF; a parser type applied directly from a parser state works the same.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8> port;
    bit<8> value;
}
header tail_t { bit<8> t; }
struct headers {
    h_t h;
    tail_t tail;
}
struct meta_t { }

parser TailParser(packet_in pkt, inout headers hdr) {
    state start { pkt.extract(hdr.tail); transition accept; }
}

parser MyParser(packet_in pkt, out headers hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        TailParser.apply(pkt, hdr);
        transition accept;
    }
}

control Rewrite(inout h_t h) {
    action set_value(bit<8> v) { h.value = v; }
    table by_port {
        key = { h.port: exact; }
        actions = { set_value; NoAction; }
    }
    apply { by_port.apply(); }
}

control MyVerify(inout headers hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        Rewrite.apply(hdr.h);
        hdr.tail.t = hdr.tail.t + 1;
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}
control MyCompute(inout headers hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr.h);
        pkt.emit(hdr.tail);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
