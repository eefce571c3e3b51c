"""P4Info generated from whole programs: p4c's naming, id, key-name and resource rules."""

from __future__ import annotations

from pathlib import Path

import pytest
from finsy.proto import p4i
from google.protobuf import text_format
from testpaths import REPO

from lgkit.cli import main
from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.frontend.compiler import compile_file, compile_source
from lgkit.sw.lang.p4info import (
    ACTION,
    CONTROLLER_HEADER,
    COUNTER,
    DIGEST,
    DIRECT_COUNTER,
    DIRECT_METER,
    REGISTER,
    TABLE,
    build_p4info,
    jenkins_hash,
    noaction_is_corelib,
)

ROOT = REPO


def hashed(prefix: int, name: str) -> int:
    return (prefix << 24) | (jenkins_hash(name) & 0xFFFFFF)


def by_name(items: object) -> dict:
    return {item.preamble.name: item for item in items}  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def basic() -> p4i.P4Info:
    return build_p4info(compile_file(str(ROOT / "p4" / "basic.p4")).ir)


def test_basic_program_names_and_p4c_ids(basic: p4i.P4Info) -> None:
    tables = by_name(basic.tables)
    actions = by_name(basic.actions)
    assert set(tables) == {"MyIngress.dmac", "MyIngress.ipv4_lpm", "MyEgress.ecn"}
    assert tables["MyIngress.ipv4_lpm"].preamble.id == 37375156
    assert actions["NoAction"].preamble.id == 21257015
    assert set(actions) == {
        "NoAction",
        "MyIngress.drop",
        "MyIngress.set_port",
        "MyIngress.ipv4_forward",
        "MyEgress.set_ecn_threshold",
    }
    for name, table in tables.items():
        assert table.preamble.id == hashed(TABLE, name)
        assert table.preamble.alias == name.split(".")[-1]
    for name, action in actions.items():
        assert action.preamble.id == hashed(ACTION, name)
    lpm = tables["MyIngress.ipv4_lpm"]
    assert lpm.initial_default_action.action_id == actions["MyIngress.drop"].preamble.id
    assert not lpm.initial_default_action.arguments and not lpm.const_default_action_id
    corelib = ["@corelib"] if noaction_is_corelib() else []  # as the installed p4c, if any
    assert list(actions["NoAction"].preamble.annotations) == [*corelib, '@noWarn("unused")']


def test_basic_program_keys_params_and_counter(basic: p4i.P4Info) -> None:
    lpm = by_name(basic.tables)["MyIngress.ipv4_lpm"]
    assert [(f.id, f.name, f.bitwidth, f.match_type) for f in lpm.match_fields] == [
        (1, "hdr.ipv4.dstAddr", 32, p4i.MatchField.LPM)
    ]
    assert lpm.size == 1024
    forward = by_name(basic.actions)["MyIngress.ipv4_forward"]
    assert [(p.id, p.name, p.bitwidth) for p in forward.params] == [
        (1, "dstAddr", 48),
        (2, "port", 9),
    ]
    (counter,) = basic.counters
    assert counter.preamble.name == "MyIngress.ingress_packets"
    assert counter.preamble.id == hashed(COUNTER, counter.preamble.name)
    assert counter.spec.unit == p4i.CounterSpec.PACKETS and counter.size == 512
    assert basic.pkg_info.arch == "v1model"


FEATURES = r"""
#include <core.p4>
#include <v1model.p4>

enum bit<8> Kind_t { A = 1, B = 2 }
type bit<16> Tag_t;

@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    @id(5) bit<7> pad;
}
header h_t {
    bit<8> x;
    bit<16> y;
    @name("renamed") bit<8> z;
}
struct headers { packet_in_t cpu; h_t h; }
struct learn_t { bit<8> x; bit<16> y; }
struct meta_t { }

register<bit<8>>(4) global_reg;

parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control Inner(inout headers hdr) {
    action bump() { hdr.h.x = hdr.h.x + 1; }
    table t { key = { hdr.h.x: exact; } actions = { bump; } }
    apply { t.apply(); }
}

control Ing(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    Inner() inner;
    direct_counter(CounterType.packets_and_bytes) dc;
    direct_meter<bit<8>>(MeterType.bytes) dm;
    register<bit<32>>(16) regs;
    @id(7) action set(bit<8> v, @id(9) Kind_t k, Tag_t tag) { hdr.h.x = v; }
    @name(".global_drop") action drop() { mark_to_drop(sm); }
    action only_default() { }
    action unused() { }
    @name("renamed_t") @id(3) table t1 {
        key = {
            hdr.h.x: ternary;
            hdr.h.y[7:0]: exact;
            hdr.h.isValid(): exact;
            hdr.h.y & 0xFF: ternary @name("masked");
            hdr.h.z: exact;
        }
        actions = { @tableonly set; drop; @defaultonly only_default; }
        const default_action = only_default();
        counters = dc;
        meters = dm;
        size = 64;
        support_timeout = true;
    }
    table t2 {
        key = { hdr.h.x: exact; }
        actions = { drop; }
        const entries = { 1: drop(); }
    }
    table t3 {
        key = { hdr.h.y: exact; }
        actions = { set; }
        default_action = set(0x2A, Kind_t.B, (Tag_t)7);
    }
    @hidden table hidden_t { actions = { drop; } }
    table never_applied { actions = { unused; } }
    apply {
        t1.apply();
        t2.apply();
        t3.apply();
        hidden_t.apply();
        inner.apply(hdr);
        digest<learn_t>(1, { hdr.h.x, hdr.h.y });
    }
}

control Eg(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control V(inout headers hdr, inout meta_t m) { apply { } }
control C(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

@pkginfo(name = "features.p4", version = "2")
V1Switch(P(), V(), Ing(), Eg(), C(), D()) main;
"""


@pytest.fixture(scope="module")
def features() -> p4i.P4Info:
    return build_p4info(compile_source(FEATURES, "features.p4").ir)


def test_names_ids_hidden_and_unused(features: p4i.P4Info) -> None:
    tables = by_name(features.tables)
    actions = by_name(features.actions)
    assert set(tables) == {"Ing.renamed_t", "Ing.t2", "Ing.t3", "Ing.inner.t"}
    assert tables["Ing.renamed_t"].preamble.id == (TABLE << 24) | 3
    assert tables["Ing.inner.t"].preamble.id == hashed(TABLE, "Ing.inner.t")
    assert tables["Ing.inner.t"].preamble.alias == "t"
    assert "Ing.unused" not in actions
    assert actions["Ing.set"].preamble.id == (ACTION << 24) | 7
    assert actions["global_drop"].preamble.id == hashed(ACTION, "global_drop")
    assert "Ing.inner.bump" in actions
    assert features.pkg_info.name == "features.p4" and features.pkg_info.version == "2"


def test_table_properties(features: p4i.P4Info) -> None:
    t1 = by_name(features.tables)["Ing.renamed_t"]
    actions = {a.preamble.id: a.preamble.name for a in features.actions}
    refs = [(actions[r.id], r.scope, list(r.annotations)) for r in t1.action_refs]
    assert refs == [
        ("Ing.set", p4i.ActionRef.TABLE_ONLY, ["@tableonly"]),
        ("global_drop", p4i.ActionRef.TABLE_AND_DEFAULT, []),
        ("Ing.only_default", p4i.ActionRef.DEFAULT_ONLY, ["@defaultonly"]),
    ]
    assert actions[t1.const_default_action_id] == "Ing.only_default"
    assert t1.size == 64
    assert t1.idle_timeout_behavior == p4i.Table.NOTIFY_CONTROL
    assert list(t1.direct_resource_ids) == [
        hashed(DIRECT_COUNTER, "Ing.dc"),
        hashed(DIRECT_METER, "Ing.dm"),
    ]
    keys = [(f.name, f.bitwidth, f.match_type) for f in t1.match_fields]
    assert keys == [
        ("hdr.h.x", 8, p4i.MatchField.TERNARY),
        ("hdr.h.y[7:0]", 8, p4i.MatchField.EXACT),
        ("hdr.h.$valid$", 1, p4i.MatchField.EXACT),
        ("masked", 16, p4i.MatchField.TERNARY),
        ("hdr.h.renamed", 8, p4i.MatchField.EXACT),
    ]
    t2 = by_name(features.tables)["Ing.t2"]
    assert t2.is_const_table and t2.has_initial_entries and t2.size == 1024
    implicit = t2.action_refs[-1]
    assert actions[implicit.id] == "NoAction"
    assert implicit.scope == p4i.ActionRef.DEFAULT_ONLY
    assert actions[t2.initial_default_action.action_id] == "NoAction"
    assert actions[t1.initial_default_action.action_id] == "Ing.only_default"


def test_initial_default_action_arguments(features: p4i.P4Info) -> None:
    t3 = by_name(features.tables)["Ing.t3"]
    call = t3.initial_default_action
    assert call.action_id == (ACTION << 24) | 7 and not t3.const_default_action_id
    # full-width big-endian byte strings, keyed by the parameters' P4Info ids
    assert [(a.param_id, a.value) for a in call.arguments] == [
        (1, b"\x2a"),
        (9, b"\x02"),
        (2, b"\x00\x07"),
    ]


def test_params_types_and_resources(features: p4i.P4Info) -> None:
    params = by_name(features.actions)["Ing.set"].params
    assert [(p.id, p.name, p.bitwidth, p.type_name.name) for p in params] == [
        (1, "v", 8, ""),
        (9, "k", 8, "Kind_t"),
        (2, "tag", 16, "Tag_t"),
    ]
    kinds = features.type_info.serializable_enums["Kind_t"]
    assert [(m.name, m.value) for m in kinds.members] == [("A", b"\x01"), ("B", b"\x02")]
    assert features.type_info.new_types["Tag_t"].original_type.bitstring.bit.bitwidth == 16
    (direct,) = features.direct_counters
    assert direct.spec.unit == p4i.CounterSpec.BOTH
    assert direct.direct_table_id == (TABLE << 24) | 3
    global_reg, register = features.registers  # global instances come first, unprefixed
    assert global_reg.preamble.name == "global_reg" and global_reg.size == 4
    assert register.preamble.id == hashed(REGISTER, "Ing.regs")
    assert register.type_spec.bitstring.bit.bitwidth == 32 and register.size == 16
    (digest,) = features.digests
    assert digest.preamble.name == "learn_t"
    assert digest.preamble.id == hashed(DIGEST, "learn_t")
    members = features.type_info.structs["learn_t"].members
    assert [(m.name, m.type_spec.bitstring.bit.bitwidth) for m in members] == [("x", 8), ("y", 16)]
    (cpu,) = features.controller_packet_metadata
    assert cpu.preamble.name == "packet_in"
    assert cpu.preamble.id == hashed(CONTROLLER_HEADER, "packet_in_t")
    assert [(m.id, m.name, m.bitwidth) for m in cpu.metadata] == [
        (1, "ingress_port", 9),
        (5, "pad", 7),
    ]


def test_compile_writes_parseable_p4info_and_config(tmp_path: Path) -> None:
    assert main(["compile", str(ROOT / "p4" / "basic.p4"), "--out", str(tmp_path)]) == 0
    text = (tmp_path / "basic.p4info.txt").read_text()
    parsed = text_format.Parse(text, p4i.P4Info())
    assert {t.preamble.name for t in parsed.tables} == {"MyIngress.dmac", "MyIngress.ipv4_lpm",
                                                        "MyEgress.ecn"}
    assert '"format": "lgkit-device-config"' in (tmp_path / "basic.json").read_text()


def test_compile_errors_are_located(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.p4"
    bad.write_text("#include <core.p4>\ncontrol c() { apply { x = 1; } }\n")
    assert main(["compile", str(bad), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:2:" in err and "error" in err and "Traceback" not in err


# Checked against p4c 1.2.5.16 (p4c-bm2-ss --p4runtime-files); tests/sw/test_bmv2_p4info.py compares
# every program of the repository with the installed p4c.
SKELETON = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct headers { h_t h; }
struct meta_t { bit<8> x; }
struct learn_t { bit<8> a; }
parser P(packet_in pk, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control V(inout headers hdr, inout meta_t m) { apply { } }
@@DECLS@@
control Ing(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    @@INGRESS@@
}
control Eg(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { @@EGRESS@@ }
control C(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pk, in headers hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), Ing(), Eg(), C(), D()) main;
"""


def skeleton(ingress: str, egress: str = "apply { }", decls: str = "") -> p4i.P4Info:
    text = (SKELETON.replace("@@DECLS@@", decls).replace("@@INGRESS@@", ingress)
            .replace("@@EGRESS@@", egress))
    return build_p4info(compile_source(text, "skeleton.p4").ir)


def test_global_actions_of_nested_controls_come_first_in_first_use_order() -> None:
    decls = """
        action g1(inout bit<8> x, bit<8> v) { x = v; }
        action g2(inout bit<8> x, bit<8> v) { x = v + 1; }
        action g3() { }
        control N1(inout bit<8> x) {
            action n1(bit<8> v) { x = v; }
            table t1 { key = { x: exact; } actions = { n1; g1(x); } }
            apply { t1.apply(); }
        }
        control N2(inout bit<8> x) {
            action n2(bit<8> v) { x = v; }
            table t2 { key = { x: exact; } actions = { g2(x); n2; g3; } }
            apply { t2.apply(); }
        }"""
    ingress = """
        action a1(bit<9> p) { sm.egress_spec = p; }
        table ti { key = { hdr.h.a: exact; } actions = { a1; g3; } }
        N1() inner;
        apply { ti.apply(); inner.apply(m.x); }"""
    egress = """
        action e1(bit<8> v) { hdr.h.b = v; }
        N2() inner2;
        table te { key = { hdr.h.b: exact; } actions = { e1; } }
        apply { inner2.apply(m.x); te.apply(); }"""
    info = skeleton(ingress, egress, decls)
    assert [a.preamble.name for a in info.actions] == [
        "g3", "NoAction", "g1", "Ing.a1", "Ing.inner.n1", "g2", "Eg.e1", "Eg.inner2.n2"]
    assert [p.name for p in by_name(info.actions)["g1"].params] == ["v"]


def test_actions_only_called_directly_have_no_parameters() -> None:
    info = skeleton("""
        action mark(bit<8> v) { hdr.h.b = v; }
        action only_called(bit<8> w) { hdr.h.a = w; }
        table t { key = { hdr.h.a: exact; } actions = { mark; NoAction; } }
        apply { t.apply(); mark(3); only_called(4); sm.egress_spec = 1; }""")
    actions = by_name(info.actions)
    assert [p.name for p in actions["Ing.mark"].params] == ["v"]
    assert not actions["Ing.only_called"].params


@pytest.mark.parametrize(("ingress", "has_type_info"), [
    ("apply { sm.egress_spec = 1; }", False),
    ("action a() { sm.egress_spec = 1; } apply { a(); }", False),
    ("apply { mark_to_drop(sm); }", True),
    ("apply { digest<learn_t>(1, { hdr.h.a }); }", True),
    ("counter(4, CounterType.packets) c; apply { c.count(0); }", True),
    ("action a() { } table t { actions = { a; } } apply { t.apply(); }", True),
])
def test_type_info_is_present_when_p4c_touches_it(ingress: str, has_type_info: bool) -> None:
    assert skeleton(ingress).HasField("type_info") == has_type_info


def test_extern_sizes_written_as_constant_expressions() -> None:
    # p4c folds `512 * 8` (as `PORTS * BANDS` from #defines in p4/vertigo.p4) to 4096; the
    # P4Info had no size at all for such a register before.
    decls = """
        const bit<32> N = 4;
        register<bit<32>>(512 * 8) r;
        counter(N + 2, CounterType.packets) c;"""
    ingress = "apply { r.write(0, 1); c.count(0); }"
    info = skeleton(ingress, decls=decls)
    assert [r.size for r in info.registers] == [4096]
    assert [c.size for c in info.counters] == [6]
    text = (SKELETON.replace("@@DECLS@@", decls).replace("@@INGRESS@@", ingress)
            .replace("@@EGRESS@@", "apply { }"))
    pipeline = Pipeline.load(compile_source(text, "skeleton.p4"))
    assert pipeline.registers["r"].size == 4096 and pipeline.counters["c"].size == 6
