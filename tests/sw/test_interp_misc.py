"""More constructs: direct meters, pop_front, header equality, functions returning headers,
two instances of one control, @name, int<W> registers, parser-local variables."""

from __future__ import annotations

import pytest
from test_interp_helpers import load, send, v1switch

from lgkit.sw.exec.pipeline import Exact, TableEntry

PROGRAM = """
header s_t { bit<8> v; }
header r_t { bit<8> color; bit<8> popped; bit<8> eq; bit<8> made; bit<8> c1; bit<8> c2;
             bit<8> sreg; bit<8> plocal; }
struct headers { s_t[3] stk; s_t a; s_t b; r_t r; }
struct metadata { bit<8> plocal; }

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t sm) {
    bit<8> seen = 0;
    state start {
        pkt.extract(hdr.stk.next);
        pkt.extract(hdr.stk.next);
        pkt.extract(hdr.a);
        pkt.extract(hdr.b);
        seen = seen + hdr.a.v;
        meta.plocal = seen;
        transition accept;
    }
}

s_t make(in bit<8> v) {
    s_t x;
    x.setValid();
    x.v = v + 1;
    return x;
}

control Bump(inout bit<8> v) {
    bit<8> local = 3;
    apply { v = v + local; }
}

control MyVerify(inout headers hdr, inout metadata meta) { apply { } }
control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    direct_meter<bit<8>>(MeterType.packets) dm;
    register<int<8>>(2) sreg;
    Bump() first;
    Bump() second;
    action paint() { dm.read(hdr.r.color); }
    @name("renamed_table") table metered {
        key = { hdr.a.v: exact; }
        actions = { paint; NoAction; }
        meters = dm;
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        hdr.r.setValid();
        hdr.r.color = 0xFF;
        metered.apply();
        hdr.stk.pop_front(1);
        hdr.r.popped = hdr.stk[0].v;
        hdr.r.eq = (hdr.a == hdr.b) ? 8w1 : 8w0;
        hdr.b = make(hdr.a.v);
        hdr.r.made = hdr.b.v;
        hdr.r.c1 = 1;
        first.apply(hdr.r.c1);
        second.apply(hdr.r.c1);
        sreg.write(0, -3);
        int<8> back;
        sreg.read(back, 0);
        hdr.r.sreg = (bit<8>)(back >> 1);
        hdr.r.plocal = meta.plocal;
    }
}
control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { }
}
control MyCompute(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.r); pkt.emit(hdr.stk); pkt.emit(hdr.b); }
}
""" + v1switch()

FIELDS = ["color", "popped", "eq", "made", "c1", "c2", "sreg", "plocal"]


@pytest.fixture(scope="module")
def pipeline():
    return load(PROGRAM)


def run(pipeline, s0: int, s1: int, a: int, b: int) -> tuple[dict[str, int], bytes]:
    out = send(pipeline, 0, bytes([s0, s1, a, b]))
    assert len(out) == 1
    body = out[0][1]
    return dict(zip(FIELDS, body[: len(FIELDS)], strict=True)), body[len(FIELDS) :]


def test_misc_constructs(pipeline) -> None:
    r, rest = run(pipeline, 4, 5, 9, 9)
    assert r["popped"] == 5
    assert r["eq"] == 1
    assert r["made"] == 10
    assert r["c1"] == 1 + 3 + 3  # two instances, each with its own local
    assert r["sreg"] == (-2) & 0xFF  # int<8> register: -3 >> 1 == -2 (arithmetic shift)
    assert r["plocal"] == 9
    assert rest == bytes([5, 10])  # stack after pop_front: [5], then b = make(9)
    assert pipeline.registers["MyIngress.sreg"].read(0) == 0xFD
    r, _ = run(pipeline, 4, 5, 9, 8)
    assert r["eq"] == 0


def test_direct_meter_and_name_annotation(pipeline) -> None:
    table = pipeline.tables["MyIngress.renamed_table"]
    assert table.direct_meter == "MyIngress.dm"
    entry = TableEntry([Exact(7)], "MyIngress.paint", [])
    table.insert(entry)
    assert run(pipeline, 0, 0, 7, 0)[0]["color"] == 0  # unconfigured: GREEN
    assert run(pipeline, 0, 0, 8, 0)[0]["color"] == 0xFF  # miss: the action does not run
    entry.meter_config = ((0, 1), (0, 2))
    colours = [run(pipeline, 0, 0, 7, 0)[0]["color"] for _ in range(3)]
    assert colours == [0, 1, 2]


GLOBALS = """
enum Kind { ONE, TWO, THREE }
header h_t { bit<8> k; bit<8> res; bit<32> total; }
struct headers { h_t h; }
struct metadata { Kind kind; }
register<bit<32>>(1) total;
parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.k) {
            1: one;
            2: two;
            default: three;
        }
    }
    state one { meta.kind = Kind.ONE; transition accept; }
    state two { meta.kind = Kind.TWO; transition accept; }
    state three { meta.kind = Kind.THREE; transition accept; }
}
control MyVerify(inout headers hdr, inout metadata meta) { apply { } }
control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        switch (meta.kind) {
            Kind.ONE: { hdr.h.res = 10; }
            Kind.TWO: { hdr.h.res = 20; }
            default: { hdr.h.res = 30; }
        }
        bit<32> t;
        total.read(t, 0);
        t = t + (bit<32>)hdr.h.k;
        total.write(0, t);
        hdr.h.total = t;
    }
}
control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { }
}
control MyCompute(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
""" + v1switch()


def test_top_level_register_and_enum_switch() -> None:
    p = load(GLOBALS)
    outs = [send(p, 0, bytes([k, 0, 0, 0, 0, 0]))[0][1] for k in (1, 2, 3)]
    assert [o[1] for o in outs] == [10, 20, 30]
    assert [int.from_bytes(o[2:6], "big") for o in outs] == [1, 3, 6]
    assert p.registers["total"].read(0) == 6


SUBPARSER = """
header h_t { bit<8> v; }
header r_t { bit<8> n; bit<8> err; bit<8> k; bit<8> kept; bit<8> inst; }
struct headers { h_t first; h_t[2] more; r_t r; }
struct metadata { bit<8> count; bit<8> kept; }

parser Inner(packet_in pkt, inout headers hdr, out bit<8> n) {
    state start {
        pkt.extract(hdr.more.next);
        pkt.extract(hdr.more.next);
        n = 2;
        transition accept;
    }
}
parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t sm) {
    Inner() inner;
    state start {
        pkt.extract(hdr.first);
        transition select(hdr.first.v) {
            1: sub;
            default: accept;
        }
    }
    state sub { inner.apply(pkt, hdr, meta.count); transition accept; }
}
control AddK(inout bit<8> x)(bit<8> k) {
    apply { x = x + k; }
}
control MyVerify(inout headers hdr, inout metadata meta) { apply { } }
control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    AddK(8w40) add40;
    apply {
        sm.egress_spec = 1;
        hdr.r.setValid();
        hdr.r.n = meta.count;
        hdr.r.err = sm.parser_error == error.PacketTooShort ? 8w1 : 8w0;
        hdr.r.k = 2;
        add40.apply(hdr.r.k);
        hdr.r.inst = (bit<8>)sm.instance_type;
        hdr.r.kept = meta.kept;
        if (hdr.first.v == 7 && sm.instance_type == 0) {
            meta.kept = 0x5A;
            resubmit({ meta.kept });
        }
    }
}
control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { }
}
control MyCompute(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.r); pkt.emit(hdr.first); pkt.emit(hdr.more); }
}
""" + v1switch()


def test_sub_parser_ctor_args_and_resubmit_with_data() -> None:
    p = load(SUBPARSER)
    out = send(p, 0, bytes([1, 5, 6, 9]))
    assert out[0][1] == bytes([2, 0, 42, 0, 0, 1, 5, 6, 9])
    # a sub-parser error keeps what it extracted and leaves the rest as payload
    out = send(p, 0, bytes([1, 5]))
    assert out[0][1] == bytes([0, 1, 42, 0, 0, 1, 5])
    out = send(p, 0, bytes([7]))
    assert out[0][1][:5] == bytes([0, 0, 42, 0x5A, 6])


BOUND = """
header h_t { bit<8> k; bit<8> n; bit<8> p; }
struct headers { h_t h; }
struct metadata { bit<8> n; }
parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control MyVerify(inout headers hdr, inout metadata meta) { apply { } }
control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action add(inout bit<8> cnt, bit<8> step) { cnt = cnt + step; hdr.h.p = step; }
    table t {
        key = { hdr.h.k: exact; }
        actions = { add(hdr.h.n); NoAction; }
        default_action = NoAction();
    }
    apply { sm.egress_spec = 1; t.apply(); }
}
control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { }
}
control MyCompute(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
""" + v1switch()


def test_table_action_with_bound_argument() -> None:
    p = load(BOUND)
    p.tables["MyIngress.t"].insert(TableEntry([Exact(3)], "MyIngress.add", [5]))
    assert send(p, 0, bytes([3, 10, 0]))[0][1] == bytes([3, 15, 5])
    assert send(p, 0, bytes([4, 10, 0]))[0][1] == bytes([4, 10, 0])


ALIASING = """
header h_t { bit<8> x; bit<8> a; bit<8> b; bit<8> s; }
struct headers { h_t h; }
struct metadata { }
parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control Mix(inout bit<8> p, inout bit<8> q) {
    apply { p = p + 1; q = p + q; }
}
control Inc(inout bit<8> v) { apply { v = v + 1; } }
control Keep(in bit<8> i, inout bit<8> o) { apply { o = o + 1; o = o + i; } }
control MyVerify(inout headers hdr, inout metadata meta) { apply { } }
control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    Mix() mix;
    Inc() inc;
    Keep() keep;
    apply {
        sm.egress_spec = 1;
        mix.apply(hdr.h.x, hdr.h.x);
        inc.apply(hdr.h.a);
        inc.apply(hdr.h.b);
        keep.apply(hdr.h.s, hdr.h.s);
    }
}
control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { }
}
control MyCompute(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
""" + v1switch()


def test_copy_in_copy_out_with_aliased_arguments() -> None:
    p = load(ALIASING)
    out = send(p, 0, bytes([3, 10, 20, 1]))[0][1]
    assert out[0] == 7  # copy semantics: p = 4, q = 4 + 3, q copied out last
    assert (out[1], out[2]) == (11, 21)  # one instance applied at two sites
    assert out[3] == 3  # `in` is a copy even when the same field is inout: 2 + 1


EQUALITY = """
header h_t { bit<8> v; }
header g_t { bit<16> w; }
header_union u_t { h_t h; g_t g; }
header r_t { bit<8> e1; bit<8> e2; bit<8> e3; bit<8> e4; }
struct headers { h_t[2] s1; h_t[2] s2; u_t u1; u_t u2; r_t r; }
struct metadata { }
parser MyParser(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.s1.next); pkt.extract(hdr.s2.next);
        pkt.extract(hdr.u1.h); pkt.extract(hdr.u2.h);
        transition accept;
    }
}
control MyVerify(inout headers hdr, inout metadata meta) { apply { } }
control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.r.setValid();
        hdr.r.e1 = hdr.s1 == hdr.s2 ? 8w1 : 8w0;
        hdr.r.e2 = hdr.u1 == hdr.u2 ? 8w1 : 8w0;
        hdr.s2 = hdr.s1;
        hdr.r.e3 = hdr.s1 != hdr.s2 ? 8w1 : 8w0;
        hdr.u2.g.setValid();
        hdr.r.e4 = hdr.u1 == hdr.u2 ? 8w1 : 8w0;
    }
}
control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr.r); pkt.emit(hdr.s1); pkt.emit(hdr.s2); pkt.emit(hdr.u1); pkt.emit(hdr.u2);
    }
}
""" + v1switch()


def test_stack_and_union_equality() -> None:
    p = load(EQUALITY)
    # stacks [1] == [1]; unions h=5 == h=5; after s2 = s1 equal; u2.g valid: unions differ
    assert send(p, 0, bytes([1, 1, 5, 5]))[0][1] == bytes.fromhex("010100000101050000")
    assert send(p, 0, bytes([1, 2, 5, 6]))[0][1] == bytes.fromhex("000000000101050000")
