// Tables: exact, ternary (with priorities), lpm, range and optional keys, action parameters,
// default actions (changed with setdefault), hit/miss, switch on action_run.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  k1;
    bit<8>  k2;
    bit<16> k3;
    bit<8>  out1;
    bit<8>  out2;
    bit<8>  out3;
    bit<8>  flags;
}

struct headers { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control Ing(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set1(bit<8> v) { hdr.h.out1 = v; }
    action set2(bit<8> v) { hdr.h.out2 = v; }
    action set3(bit<8> v) { hdr.h.out3 = v; }
    action both(bit<8> a, bit<8> b) {
        hdr.h.out1 = a;
        hdr.h.out2 = b;
    }
    action none() { }

    table t_exact {
        key = { hdr.h.k1: exact; }
        actions = { set1; both; none; }
        default_action = none();
    }
    table t_ternary {
        key = {
            hdr.h.k1: ternary;
            hdr.h.k2: ternary;
        }
        actions = { set2; none; }
        default_action = set2(0xDE);
    }
    table t_lpm {
        key = { hdr.h.k3: lpm; }
        actions = { set3; none; }
        default_action = none();
    }
    table t_range {
        key = { hdr.h.k2: range; }
        actions = { set3; none; }
        default_action = none();
    }
    table t_optional {
        key = {
            hdr.h.k1: optional;
            hdr.h.k2: exact;
        }
        actions = { set3; none; }
        default_action = none();
    }

    apply {
        sm.egress_spec = 1;
        if (hdr.h.flags == 0) {
            if (t_exact.apply().hit) {
                hdr.h.flags = 0x01;
            } else {
                hdr.h.flags = 0x02;
            }
            switch (t_ternary.apply().action_run) {
                set2: { hdr.h.flags = hdr.h.flags | 0x10; }
                default: { hdr.h.flags = hdr.h.flags | 0x20; }
            }
            if (t_lpm.apply().miss) {
                hdr.h.flags = hdr.h.flags | 0x40;
            }
        } else if (hdr.h.flags == 1) {
            t_range.apply();
        } else {
            t_optional.apply();
        }
    }
}

control Eg(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control Vck(inout headers hdr, inout meta_t meta) { apply { } }
control Cck(inout headers hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), Vck(), Ing(), Eg(), Cck(), D()) main;
