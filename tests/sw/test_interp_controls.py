"""Control constructs: header stacks and unions in controls, functions, sub-controls, action
calls with directions, struct copies, enums, switch on values, bool, slice assignment, exit."""

from __future__ import annotations

import pytest
from test_interp_helpers import load, send, v1switch

PROGRAM = """
enum bit<8> Color { RED = 1, GREEN = 2 }
enum Mode { A, B }
typedef bit<8> byte_t;
header s_t { byte_t v; }
header u1_t { bit<8> a; }
header u2_t { bit<16> b; }
header_union u_t { u1_t one; u2_t two; }
header sel_t { bit<8> which; bit<8> idx; }
header r_t {
    bit<8> sum; bit<8> last; bit<8> dyn; bit<8> uvalid; bit<8> uval; bit<8> oneafter;
    bit<8> mx; bit<8> subv; bit<8> dbl; bit<8> sw1; bit<8> sw2; bit<8> st; bit<8> en;
    bit<8> vsw; bit<8> flag; bit<8> sl; bit<8> after_exit; bit<8> top;
}
struct inner_t { bit<8> x; bit<8> y; }
struct metadata { inner_t in1; inner_t in2; Mode mode; bool flag; }
struct headers { sel_t sel; s_t[4] stk; u_t u; r_t r; }

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.sel);
        pkt.extract(hdr.stk.next);
        pkt.extract(hdr.stk.next);
        transition select(hdr.sel.which) {
            1: one;
            2: two;
            default: accept;
        }
    }
    state one { pkt.extract(hdr.u.one); transition accept; }
    state two { pkt.extract(hdr.u.two); transition accept; }
}

control Sub(inout bit<8> v, in bit<8> add, out bit<8> dbl) {
    apply {
        dbl = add << 1;
        if (add == 0) { return; }
        v = v + add;
    }
}

bit<8> max8(in bit<8> a, in bit<8> b) {
    if (a > b) { return a; }
    return b;
}

void incr(inout bit<8> x) { x = x + 1; }

control MyVerify(inout headers hdr, inout metadata meta) { apply { } }
control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    Sub() sub1;
    action swap(inout bit<8> a, inout bit<8> b) {
        bit<8> t = a;
        a = b;
        b = t;
    }
    apply {
        sm.egress_spec = 1;
        hdr.r.setValid();
        hdr.r.sum = hdr.stk[0].v + hdr.stk[1].v;
        hdr.r.dyn = hdr.stk[(bit<32>)hdr.sel.idx].v;
        hdr.stk.push_front(1);
        hdr.stk[0].setValid();
        hdr.stk[0].v = 0x77;
        hdr.r.last = (bit<8>)hdr.stk.lastIndex;
        hdr.r.top = hdr.stk[2].v;
        if (hdr.u.isValid()) { hdr.r.uvalid = 1; }
        if (hdr.u.one.isValid()) { hdr.r.uval = hdr.u.one.a; }
        else if (hdr.u.two.isValid()) { hdr.r.uval = hdr.u.two.b[7:0]; }
        hdr.u.two.setValid();
        hdr.r.oneafter = hdr.u.one.isValid() ? 8w1 : 8w0;
        hdr.r.mx = max8(hdr.stk[1].v, hdr.stk[2].v);
        incr(hdr.r.mx);
        hdr.r.subv = 10;
        bit<8> d;
        sub1.apply(hdr.r.subv, hdr.sel.idx, d);
        hdr.r.dbl = d;
        hdr.r.sw1 = 1;
        hdr.r.sw2 = 2;
        swap(hdr.r.sw1, hdr.r.sw2);
        meta.in1 = { 5, 6 };
        meta.in2 = meta.in1;
        meta.in2.y = 9;
        hdr.r.st = meta.in2.x + meta.in2.y + meta.in1.y;
        meta.mode = Mode.B;
        if (meta.mode == Mode.B) { hdr.r.en = (bit<8>)Color.GREEN; }
        switch (hdr.stk[2].v) {
            1: { hdr.r.vsw = 10; }
            2:
            3: { hdr.r.vsw = 20; }
            default: { hdr.r.vsw = 30; }
        }
        meta.flag = hdr.stk[2].v > 1;
        hdr.r.flag = meta.flag ? 8w1 : 8w0;
        hdr.r.sl = 0xFF;
        hdr.r.sl[5:2] = 4w0;
        if (hdr.stk[2].v == 0xEE) { exit; }
        hdr.r.after_exit = 1;
    }
}
control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { }
}
control MyCompute(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.r); pkt.emit(hdr.stk); pkt.emit(hdr.u); }
}
""" + v1switch()

FIELDS = ["sum", "last", "dyn", "uvalid", "uval", "oneafter", "mx", "subv", "dbl", "sw1", "sw2",
          "st", "en", "vsw", "flag", "sl", "after_exit", "top"]


@pytest.fixture(scope="module")
def pipeline():
    return load(PROGRAM)


def run(pipeline, which: int, idx: int, s0: int, s1: int, extra: bytes) -> tuple[dict, bytes]:
    out = send(pipeline, 0, bytes([which, idx, s0, s1]) + extra)
    assert len(out) == 1
    body = out[0][1]
    return dict(zip(FIELDS, body[: len(FIELDS)], strict=True)), body[len(FIELDS) :]


def test_stack_union_functions_and_more() -> None:
    p = load(PROGRAM)
    r, rest = run(p, 1, 1, 3, 2, b"\x42\x99")
    assert r["sum"] == 5
    assert r["dyn"] == 2  # stk[1] before push_front
    assert r["last"] == 2 and r["top"] == 2  # push_front shifted [3, 2] to [_, 3, 2]
    assert (r["uvalid"], r["uval"], r["oneafter"]) == (1, 0x42, 0)
    assert r["mx"] == 4  # max(3, 2) + 1
    assert (r["subv"], r["dbl"]) == (11, 2)
    assert (r["sw1"], r["sw2"]) == (2, 1)
    assert r["st"] == 5 + 9 + 6
    assert r["en"] == 2
    assert r["vsw"] == 20 and r["flag"] == 1
    assert r["sl"] == 0xC3
    assert r["after_exit"] == 1
    # emitted: stack [0x77, 3, 2] (element 3 invalid), union member two (zeroed by setValid)
    assert rest == bytes([0x77, 3, 2]) + b"\x00\x00" + b"\x99"


def test_return_in_sub_control_and_value_switch(pipeline) -> None:
    r, _ = run(pipeline, 0, 0, 1, 1, b"")
    assert (r["subv"], r["dbl"]) == (10, 0)  # returned before the update
    assert r["vsw"] == 10 and r["flag"] == 0
    assert r["uvalid"] == 0


def test_dynamic_stack_index_out_of_range_ends_block(pipeline) -> None:
    r, _ = run(pipeline, 0, 7, 1, 1, b"")
    assert r["after_exit"] == 0 and r["sum"] == 2
    assert any("out of bounds" in line for line in pipeline.logs)


def test_exit_skips_the_rest(pipeline) -> None:
    r, _ = run(pipeline, 0, 0, 1, 0xEE, b"")
    assert r["after_exit"] == 0 and r["sl"] == 0xC3
