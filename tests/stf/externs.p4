// Stateful externs: register read/write (and out-of-range accesses), indexed counters
// (packets, bytes, both), a direct counter on a table, an unconfigured meter (GREEN), a direct
// meter, random with equal bounds, and the externs that only report: digest, log_msg,
// assert/assume.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  op;
    bit<8>  idx;
    bit<32> val;
    bit<32> old;
    bit<8>  color;
    bit<8>  rnd;
}

struct headers { h_t h; }
struct digest_t {
    bit<8>  op;
    bit<32> val;
}
struct meta_t { }

parser P(packet_in pkt, out headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control Ing(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<32>>(8) regs;
    counter(8, CounterType.packets) pkts;
    counter(8, CounterType.bytes) octets;
    counter(8, CounterType.packets_and_bytes) both;
    direct_counter(CounterType.packets) hits;
    meter(4, MeterType.packets) rate;
    direct_meter<bit<8>>(MeterType.bytes) dmeter;

    action count_hit() {
        hits.count();
        dmeter.read(hdr.h.color);
    }
    table counted {
        key = { hdr.h.idx: exact; }
        actions = { count_hit; NoAction; }
        counters = hits;
        meters = dmeter;
        default_action = NoAction();
    }

    apply {
        sm.egress_spec = 1;
        bit<32> index = (bit<32>)hdr.h.idx;
        if (hdr.h.op == 1) {
            regs.read(hdr.h.old, index);
            regs.write(index, hdr.h.val);
        } else if (hdr.h.op == 2) {
            hdr.h.old = 0xAAAAAAAA;
            regs.read(hdr.h.old, 100);
            regs.write(100, hdr.h.val);
        } else if (hdr.h.op == 3) {
            rate.execute_meter(index, hdr.h.color);
            counted.apply();
        } else if (hdr.h.op == 4) {
            rate.execute_meter(index, hdr.h.color);
        }
        pkts.count(index);
        octets.count(index);
        both.count(index);
        random(hdr.h.rnd, 8w7, 8w7);
        digest<digest_t>(1, { hdr.h.op, hdr.h.val });
        log_msg("op {} idx {}", { hdr.h.op, hdr.h.idx });
        assert(hdr.h.op != 0xFF);
        assume(hdr.h.op != 0xFE);
    }
}

control Eg(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control Vck(inout headers hdr, inout meta_t meta) { apply { } }
control Cck(inout headers hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), Vck(), Ing(), Eg(), Cck(), D()) main;
