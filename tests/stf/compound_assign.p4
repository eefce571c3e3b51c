// Compound assignments (P4 1.2.5): `x op= e` is `x = x op e` with the location x evaluated
// once, for + - * & | ^ << >> |+| |-| (and / % on constants' multiples), on fields, slices,
// stack elements at a run-time index and loop variables.
#include <core.p4>
#include <v1model.p4>

header ops_t {
    bit<8> add;
    bit<8> sub;
    int<8> mul;
    bit<8> band;
    bit<8> bor;
    bit<8> bxor;
    bit<8> shl;
    bit<8> shr;
    bit<8> sat_add;
    bit<8> sat_sub;
    bit<8> low_nibble;
    bit<8> calls;
    bit<8> sum;
}
header slot_t { bit<8> v; }

struct headers {
    ops_t ops;
    slot_t[2] slots;
}
struct meta_t { }

// counts its calls in `n`: a compound assignment must evaluate its target's index once
bit<1> second(inout bit<8> n) {
    n += 1;
    return 1;
}

parser MyParser(packet_in pkt, out headers hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ops);
        pkt.extract(hdr.slots.next);
        pkt.extract(hdr.slots.next);
        transition accept;
    }
}

control MyVerify(inout headers hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action sum_to(bit<8> n) {
        hdr.ops.sum = 0;
        for (bit<8> i = 1; i <= n; i += 1) {
            hdr.ops.sum += i;
        }
    }
    apply {
        hdr.ops.add += 5;
        hdr.ops.sub -= 3;
        hdr.ops.mul *= -2;
        hdr.ops.band &= 0x0F;
        hdr.ops.bor |= 0x80;
        hdr.ops.bxor ^= 0xFF;
        hdr.ops.shl <<= 2;
        hdr.ops.shr >>= 1;
        hdr.ops.sat_add |+|= 250;
        hdr.ops.sat_sub |-|= 250;
        hdr.ops.low_nibble[3:0] += 1;
        hdr.slots[second(hdr.ops.calls)].v += 1;
        sum_to(4);
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}
control MyCompute(inout headers hdr, inout meta_t meta) { apply { } }
control MyDeparser(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr.ops);
        pkt.emit(hdr.slots);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
