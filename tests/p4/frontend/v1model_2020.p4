/* v1model with V1MODEL_VERSION 20200408: index type parameters, PortId_t (frontend test). */
#include <core.p4>
#define V1MODEL_VERSION 20200408
#include <v1model.p4>
header h_t { bit<8> a; bit<16> b; }
struct headers_t { h_t h; h_t[3] hs; }
struct meta_t { bit<7> idx; bit<32> v; }
parser MyParser(packet_in b, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { b.extract(h.h); b.extract(h.hs.next); transition select(h.h.a, h.h.b) {
        (0 .. 10, 0x10 &&& 0xF0): accept;
        (_, _): next;
    } }
    state next { b.extract(h.hs.next); transition select(h.hs.lastIndex) { 2: accept; default: next; } }
}
control MyVerify(inout headers_t h, inout meta_t m) { apply { } }
control MyIngress(inout headers_t h, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<32>, bit<7>>(128) r;
    register<bit<16>>(32) r2;
    counter<bit<7>>(128, CounterType.packets) c;
    meter<bit<7>>(128, MeterType.bytes) mt;
    bit<2> color;
    @name("ingress.act") action act(PortId_t p) { sm.egress_spec = p; }
    action nop() {}
    table t {
        key = { h.h.a: exact; h.h.b: range; }
        actions = { act; nop; }
        const entries = {
            (1, 1 .. 100): act(2);
            (2, _): nop();
            priority = 3: (3, 5): nop;
        }
        default_action = nop();
    }
    apply {
        r.read(meta.v, meta.idx);
        r.write(meta.idx, meta.v + 1);
        r2.write(3, 16w7);
        c.count(meta.idx);
        mt.execute_meter(meta.idx, color);
        if (t.apply().miss) { exit; }
        h.hs[1].a = h.hs[0].a << 1;
        h.h.a = h.hs[meta.idx[1:0]].a;
        h.h.b[7:0] = 8w1;
        h.h = { a = 1, b = 2 };
        h.h = {3, 4};
        bool x = h.h == h.hs[0];
        h.h.b = h.h.minSizeInBits() == 24 ? 16w1 : 16w0;
        log_msg("v={}", {meta.v});
    }
}
control MyEgress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t h, inout meta_t m) { apply { } }
control MyDeparser(packet_out b, in headers_t h) { apply { b.emit(h); } }
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
