/* Idioms seen in p4c's v1model test programs, written for lgkit (frontend test). */
#include <v1model.p4>

#define STACK_DEPTH 4

header hdr { bit<8> kind; bit<8> len; }
header item_t { bit<8> tag; bit<8> value; }
header opts_t { bit<8> n; varbit<64> data; }
header peek_t { bit<4> hi; bit<4> lo; }

typedef tuple<bit<8>, varbit<64>> blob_t;

struct headers_t {
    hdr first;
    item_t[STACK_DEPTH] items;
    opts_t opts;
}

struct meta_t { bit<16> total; }

item_t make_item(in bit<8> tag, inout bit<16> counter) {
    counter = counter + 1;
    if (tag == 0)
        return { 8w0, 8w0 };
    return { tag, 8w1 };
}

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.first);
        pkt.extract(h.opts, (bit<32>)(8 * (bit<9>)pkt.lookahead<peek_t >().lo));
        transition select(h.first.kind) {
            1 .. 3: items;
            default: accept;
        }
    }
    state items {
        pkt.extract(h.items.next);
        transition select(h.items.last.tag) {
            0: accept;
            default: items;
        }
    }
}

control Step(inout headers_t h, in bit<8> op) {
    apply {
        if (op[7:4] == 1) {
            h.items.push_front(1);
            h.items[0].setValid();
        } else if (op[7:4] == 2) {
            h.items.pop_front(2);
        }
        h.first.len[0:0] = 1;
    }
}

control MyIngress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    Step() step;
    register<bit<16>>(32w64) seen;

    action out_port(bit<9> p) { sm.egress_spec = p; }
    action none() { }

    table by_len {
        key = { h.first.len : range; }
        actions = { out_port; none; }
        default_action = none;
        const entries = {
            1..8 : out_port(1);
            9..16 : out_port(2);
            42 : out_port(3);
            _ : out_port(4);
        }
    }

    apply {
        step.apply(h, h.first.kind);
        step.apply(h, h.first.len);
        @atomic {
            seen.read(m.total, (bit<32>)h.first.kind);
            seen.write((bit<32>)h.first.kind, m.total + 1);
        }
        if (h.first.kind == 7)
            by_len.apply();
        h.items[1] = make_item(h.first.kind, m.total);
        hdr copy = h.first;
        if (copy == h.first && h.opts.data == h.opts.data) {
            sm.egress_spec = sm.egress_spec + 1;
        }
    }
}

control MyEgress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control Verify(inout headers_t h, inout meta_t m) { apply { } }
control Compute(inout headers_t h, inout meta_t m) { apply { } }
control Deparse(packet_out pkt, in headers_t h) { apply { pkt.emit(h); } }

V1Switch(P(), Verify(), MyIngress(), MyEgress(), Compute(), Deparse()) main;
