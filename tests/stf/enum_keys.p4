// Serializable enums as table keys of every match kind: STF entries give their numeric
// values, and P4Info lists the enum in type_info.serializable_enums as p4c does.
#include <core.p4>
#include <v1model.p4>

enum bit<8> Proto { TCP = 6, UDP = 17, ICMP = 1 }

header h_t {
    bit<8> proto;
    bit<8> by_exact;
    bit<8> by_ternary;
    bit<8> by_lpm;
}
struct headers { h_t h; }
struct meta_t { Proto proto; }

parser MyParser(packet_in pkt, out headers hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control MyVerify(inout headers hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action mark_exact(bit<8> v) { hdr.h.by_exact = v; }
    action mark_ternary(bit<8> v) { hdr.h.by_ternary = v; }
    action mark_lpm(bit<8> v) { hdr.h.by_lpm = v; }
    table exact_t {
        key = { meta.proto: exact; }
        actions = { mark_exact; NoAction; }
    }
    table ternary_t {
        key = { meta.proto: ternary; }
        actions = { mark_ternary; NoAction; }
    }
    table lpm_t {
        key = { meta.proto: lpm; }
        actions = { mark_lpm; NoAction; }
    }
    apply {
        meta.proto = (Proto)hdr.h.proto;
        exact_t.apply();
        ternary_t.apply();
        lpm_t.apply();
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}
control MyCompute(inout headers hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
