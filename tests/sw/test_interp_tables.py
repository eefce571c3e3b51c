"""Tables: every match kind, priorities, default and const entries, switch on action_run,
hit/miss, and direct counters, through generated code."""

from __future__ import annotations

import pytest
from test_interp_helpers import load, send, v1switch

from lgkit.sw.exec.pipeline import Exact, Lpm, Optional_, Range, TableEntry, Ternary

PROGRAM = """
header k_t { bit<8> a; bit<16> b; bit<32> ip; bit<8> c; }
header r_t { bit<8> ex; bit<8> tern; bit<8> lpm; bit<8> rng; bit<8> opt; bit<8> cst;
             bit<8> clpm; bit<8> sw; bit<8> hm; }
struct headers { k_t k; r_t r; }
struct metadata { }
parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.k); transition accept; }
}
control MyVerify(inout headers hdr, inout metadata meta) { apply { } }
control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    direct_counter(CounterType.packets_and_bytes) dc;
    action set_ex(bit<8> v) { hdr.r.ex = v; }
    action set_tern(bit<8> v) { hdr.r.tern = v; }
    action set_lpm(bit<8> v) { hdr.r.lpm = v; }
    action set_rng(bit<8> v) { hdr.r.rng = v; }
    action set_opt(bit<8> v) { hdr.r.opt = v; }
    action set_cst(bit<8> v) { hdr.r.cst = v; }
    action set_clpm(bit<8> v) { hdr.r.clpm = v; }
    action one() { }
    action two() { }
    table t_exact {
        key = { hdr.k.a: exact; hdr.k.b: exact; }
        actions = { set_ex; NoAction; }
        default_action = set_ex(0xEE);
        counters = dc;
    }
    table t_tern {
        key = { hdr.k.a: ternary; hdr.k.b: ternary; }
        actions = { set_tern; }
        default_action = set_tern(0);
    }
    table t_lpm { key = { hdr.k.ip: lpm; } actions = { set_lpm; } default_action = set_lpm(0); }
    table t_rng {
        key = { hdr.k.b: range; hdr.k.c: exact; }
        actions = { set_rng; }
        default_action = set_rng(0);
    }
    table t_opt {
        key = { hdr.k.a: optional; hdr.k.c: optional; }
        actions = { set_opt; }
        default_action = set_opt(0);
    }
    table t_const {
        key = { hdr.k.a: ternary; }
        actions = { set_cst; }
        const entries = {
            0x10 &&& 0xF0 : set_cst(1);
            0x12 : set_cst(2);
            _ : set_cst(3);
        }
    }
    table t_clpm {
        key = { hdr.k.ip: lpm; }
        actions = { set_clpm; }
        const entries = {
            0x0A000000 &&& 0xFF000000 : set_clpm(8);
            0x0A010000 &&& 0xFFFF0000 : set_clpm(16);
        }
        const default_action = set_clpm(0);
    }
    table t_sw { key = { hdr.k.c: exact; } actions = { one; two; NoAction; } }
    apply {
        hdr.r.setValid();
        if (t_exact.apply().hit) { hdr.r.hm = 1; } else { hdr.r.hm = 2; }
        t_tern.apply();
        if (t_lpm.apply().miss) { hdr.r.hm = hdr.r.hm | 0x10; }
        t_rng.apply();
        t_opt.apply();
        t_const.apply();
        t_clpm.apply();
        switch (t_sw.apply().action_run) {
            one: { hdr.r.sw = 1; }
            two: { hdr.r.sw = 2; }
            default: { hdr.r.sw = 9; }
        }
        sm.egress_spec = 1;
    }
}
control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { }
}
control MyCompute(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.r); } }
""" + v1switch()

FIELDS = ["ex", "tern", "lpm", "rng", "opt", "cst", "clpm", "sw", "hm"]


@pytest.fixture(scope="module")
def pipeline():
    p = load(PROGRAM)
    t = p.tables
    t["MyIngress.t_exact"].insert(TableEntry([Exact(1), Exact(0x0203)], "MyIngress.set_ex", [7]))
    tern = t["MyIngress.t_tern"]
    tern.insert(TableEntry([Ternary(0x10, 0xF0), None], "MyIngress.set_tern", [1], priority=1))
    tern.insert(TableEntry([Ternary(0x11, 0xFF), None], "MyIngress.set_tern", [2], priority=5))
    tern.insert(TableEntry([None, Ternary(0x0200, 0xFF00)], "MyIngress.set_tern", [3],
                           priority=3))
    lpm = t["MyIngress.t_lpm"]
    lpm.insert(TableEntry([Lpm(0x0A000000, 8)], "MyIngress.set_lpm", [8]))
    lpm.insert(TableEntry([Lpm(0x0A0B0C00, 24)], "MyIngress.set_lpm", [24]))
    lpm.insert(TableEntry([Lpm(0x0A0B0000, 16)], "MyIngress.set_lpm", [16]))
    rng = t["MyIngress.t_rng"]
    rng.insert(TableEntry([Range(0x0100, 0x01FF), Exact(5)], "MyIngress.set_rng", [1], 1))
    rng.insert(TableEntry([Range(0x0180, 0x0190), Exact(5)], "MyIngress.set_rng", [2], 2))
    opt = t["MyIngress.t_opt"]
    opt.insert(TableEntry([Optional_(0x11), None], "MyIngress.set_opt", [1], priority=1))
    opt.insert(TableEntry([None, Optional_(5)], "MyIngress.set_opt", [2], priority=2))
    t["MyIngress.t_sw"].insert(TableEntry([Exact(5)], "MyIngress.one", []))
    t["MyIngress.t_sw"].insert(TableEntry([Exact(6)], "MyIngress.two", []))
    return p


def run(pipeline, a: int, b: int, ip: int, c: int) -> dict[str, int]:
    data = bytes([a]) + b.to_bytes(2, "big") + ip.to_bytes(4, "big") + bytes([c])
    out = send(pipeline, 0, data)
    assert len(out) == 1 and out[0][0] == 1
    return dict(zip(FIELDS, out[0][1][: len(FIELDS)], strict=True))


def test_exact_hit_miss_and_direct_counter(pipeline) -> None:
    t = pipeline.tables["MyIngress.t_exact"]
    entry = t.find([Exact(1), Exact(0x0203)])
    assert run(pipeline, 1, 0x0203, 0, 0)["ex"] == 7
    r = run(pipeline, 1, 0x0204, 0, 0)
    assert r["ex"] == 0xEE and r["hm"] & 0x0F == 2
    assert entry.counter == (1, 8)
    assert t.direct_counter == "MyIngress.dc"


def test_ternary_priorities(pipeline) -> None:
    assert run(pipeline, 0x11, 0, 0, 0)["tern"] == 2  # priority 5 beats 1
    assert run(pipeline, 0x12, 0x0200, 0, 0)["tern"] == 3  # priority 3 beats 1
    assert run(pipeline, 0x12, 0x0300, 0, 0)["tern"] == 1
    assert run(pipeline, 0x22, 0x0300, 0, 0)["tern"] == 0  # default


def test_lpm_and_miss(pipeline) -> None:
    assert run(pipeline, 0, 0, 0x0A0B0C0D, 0)["lpm"] == 24
    assert run(pipeline, 0, 0, 0x0A0B0D0D, 0)["lpm"] == 16
    assert run(pipeline, 0, 0, 0x0A0C0D0D, 0)["lpm"] == 8
    r = run(pipeline, 0, 0, 0x0B000000, 0)
    assert r["lpm"] == 0 and r["hm"] & 0x10


def test_range_and_optional(pipeline) -> None:
    assert run(pipeline, 0, 0x0185, 0, 5)["rng"] == 2
    assert run(pipeline, 0, 0x0105, 0, 5)["rng"] == 1
    assert run(pipeline, 0, 0x0185, 0, 6)["rng"] == 0
    assert run(pipeline, 0x11, 0, 0, 5)["opt"] == 2
    assert run(pipeline, 0x11, 0, 0, 4)["opt"] == 1
    assert run(pipeline, 0x12, 0, 0, 4)["opt"] == 0


def test_const_entries_in_order_and_const_lpm(pipeline) -> None:
    assert run(pipeline, 0x12, 0, 0, 0)["cst"] == 1  # the first listed entry wins
    assert run(pipeline, 0x22, 0, 0, 0)["cst"] == 3
    assert run(pipeline, 0, 0, 0x0A010203, 0)["clpm"] == 16
    assert run(pipeline, 0, 0, 0x0A020203, 0)["clpm"] == 8
    assert run(pipeline, 0, 0, 0x0B020203, 0)["clpm"] == 0
    t = pipeline.tables["MyIngress.t_const"]
    assert t.const_entries
    with pytest.raises(ValueError):
        t.insert(TableEntry([Ternary(1, 1)], "MyIngress.set_cst", [1], priority=1))
    with pytest.raises(ValueError):
        pipeline.tables["MyIngress.t_clpm"].set_default("MyIngress.set_clpm", [1])


def test_switch_on_action_run(pipeline) -> None:
    assert run(pipeline, 0, 0, 0, 5)["sw"] == 1
    assert run(pipeline, 0, 0, 0, 6)["sw"] == 2
    assert run(pipeline, 0, 0, 0, 7)["sw"] == 9  # default action NoAction


def test_set_default_changes_miss_action(pipeline) -> None:
    t = pipeline.tables["MyIngress.t_tern"]
    t.set_default("MyIngress.set_tern", [0x42])
    try:
        assert run(pipeline, 0x22, 0x0300, 0, 0)["tern"] == 0x42
    finally:
        t.set_default("MyIngress.set_tern", [0])
