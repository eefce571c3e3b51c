"""Representative v1model programs compile, and the checked IR holds what the contract says."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
from testpaths import TESTS

from lgkit.sw.lang import ir
from lgkit.sw.lang import types as t
from lgkit.sw.lang.frontend import CompiledProgram, P4Error, compile_file, compile_source
from lgkit.sw.lang.frontend.typeops import same_type

P4_DIR = TESTS / "p4" / "frontend"


@pytest.fixture(scope="module")
def basic() -> CompiledProgram:
    return compile_file(str(P4_DIR / "basic.p4"))


@pytest.fixture(scope="module")
def constructs() -> CompiledProgram:
    return compile_file(str(P4_DIR / "constructs.p4"))


def walk(node: Any) -> Iterator[Any]:
    """Every ir node reachable from node (depth first), not following resolved decls."""
    if isinstance(node, (list, tuple)):
        for item in node:
            yield from walk(item)
        return
    if not isinstance(node, ir.Node):
        return
    yield node
    for f in dataclasses.fields(node):
        if f.name in ("decl", "callee", "loc", "type", "resolved"):
            continue
        yield from walk(getattr(node, f.name))


def decl(program: ir.Program | ir.ControlDecl, name: str) -> Any:
    decls = program.decls if isinstance(program, ir.Program) else program.locals
    return next(d for d in decls if d.name == name)


def calls_to(node: Any, name: str) -> list[ir.Call]:
    found = []
    for n in walk(node):
        if isinstance(n, ir.Call):
            target = n.target
            if getattr(target, "name", None) == name:
                found.append(n)
    return found


def test_basic_finds_main_and_v1model_blocks(basic: CompiledProgram) -> None:
    program = basic.ir
    assert basic.name == "basic"
    assert program.main is not None and program.main.name == "main"
    assert {k: v.name for k, v in program.blocks.items()} == {
        "p": "MyParser", "vr": "MyVerifyChecksum", "ig": "MyIngress", "eg": "MyEgress",
        "ck": "MyComputeChecksum", "dep": "MyDeparser",
    }
    for arg in program.main.args:
        assert isinstance(arg.value, ir.Call) and arg.value.kind == ir.CallKind.CONSTRUCTOR


def test_basic_table_and_actions(basic: CompiledProgram) -> None:
    ingress = basic.ir.blocks["ig"]
    table = decl(ingress, "ipv4_lpm")
    assert [k.match_kind for k in table.keys] == ["lpm"]
    assert table.keys[0].expr.type == t.BitsT(32)
    assert [a.decl.name for a in table.actions] == ["ipv4_forward", "drop", "NoAction"]
    assert table.default_action.decl is decl(ingress, "drop")
    assert isinstance(table.size, ir.IntLit) and table.size.value == 1024
    forward = decl(ingress, "ipv4_forward")
    assert [(p.name, p.direction, p.type_ref.resolved) for p in forward.params] == [
        ("dstAddr", "", t.BitsT(48)), ("port", "", t.BitsT(9))]


def test_untyped_literal_gets_explicit_cast(basic: CompiledProgram) -> None:
    forward = decl(basic.ir.blocks["ig"], "ipv4_forward")
    ttl = forward.body.stmts[-1]
    assert isinstance(ttl, ir.Assign) and isinstance(ttl.rhs, ir.Binary)
    one = ttl.rhs.right
    assert isinstance(one, ir.Cast) and one.type == t.BitsT(8)
    assert isinstance(one.expr, ir.IntLit) and one.expr.value == 1 and one.expr.type == t.InfIntT()


def test_call_kinds_and_callees(basic: CompiledProgram) -> None:
    program = basic.ir
    drop = calls_to(program.blocks["ig"], "mark_to_drop")[0]
    assert drop.kind == ir.CallKind.EXTERN_FUNCTION
    assert len(drop.callee.function.params) == 1
    extract = calls_to(program.blocks["p"], "extract")[0]
    assert extract.kind == ir.CallKind.EXTERN_METHOD and extract.callee.name == "extract"
    assert extract.target.expr.type.name == "packet_in"
    assert extract.args[0].value.type.name == "ethernet_t"
    apply = calls_to(program.blocks["ig"], "apply")[0]
    assert apply.kind == ir.CallKind.TABLE_APPLY and apply.callee.name == "ipv4_lpm"
    valid = calls_to(program.blocks["ig"], "isValid")[0]
    assert valid.kind == ir.CallKind.HEADER_METHOD and valid.type == t.BoolT()
    checksum = calls_to(program.blocks["vr"], "verify_checksum")[0]
    data = checksum.args[1].value
    assert isinstance(data, ir.ListExpr) and isinstance(data.type, t.TupleT)
    assert len(data.type.elems) == 11


def test_standard_metadata_is_as_documented(basic: CompiledProgram) -> None:
    sm = decl(basic.ir, "standard_metadata_t").resolved
    names = [name for name, _ in sm.fields]
    assert names[:5] == ["ingress_port", "egress_spec", "egress_port", "instance_type",
                         "packet_length"]
    assert sm.field_type("egress_spec") == t.BitsT(9)
    assert sm.field_type("mcast_grp") == t.BitsT(16)
    assert sm.field_annotations["mcast_grp"] == {"alias": ['"intrinsic_metadata.mcast_grp"']}
    assert sm.annotations == {"metadata": [], "name": ['"standard_metadata"']}
    assert isinstance(sm.field_type("parser_error"), t.EnumT)


def test_every_node_is_resolved_and_typed(constructs: CompiledProgram) -> None:
    seen = 0
    for node in walk(constructs.ir):
        if isinstance(node, ir.Expr):
            assert node.type is not None, node
            seen += 1
        if isinstance(node, ir.PathExpr):
            assert node.decl is not None, node
        if isinstance(node, ir.Call):
            assert node.kind is not None and node.callee is not None, node
        if isinstance(node, ir.Assign):
            assert same_type(node.lhs.type, node.rhs.type), node.loc
        if isinstance(node, ir.Slice):
            assert isinstance(node.hi, int) and isinstance(node.lo, int)
    assert seen > 500


def test_constants_are_folded(constructs: CompiledProgram) -> None:
    values = {d.name: d.value for d in constructs.ir.decls if isinstance(d, ir.ConstDecl)}
    assert values["FROM_ELIF"] == 0xAA
    assert values["BIG"] == 1000
    assert values["NEG"] == -3
    assert values["OCT"] == 0o17
    assert values["SHIFTED"] == 16
    assert values["FLAG"] is True
    assert values["TYPE_IPV4"] == 0x800


def test_types_of_the_subset(constructs: CompiledProgram) -> None:
    program = constructs.ir
    headers = decl(program, "headers_t").resolved
    vlans = headers.field_type("vlans")
    assert isinstance(vlans, t.StackT) and vlans.size == 2 and vlans.elem.name == "vlan_t"
    assert headers.field_type("l4").kind == "header_union"
    assert headers.field_type("opts").field_type("data") == t.VarbitT(320)
    proto = decl(program, "Proto").resolved
    assert proto.underlying == t.BitsT(8) and proto.values == {"TCP": 6, "UDP": 17, "ICMP": 1}
    assert decl(program, "Color").resolved.members == ["Red", "Green", "Blue"]
    error = decl(program, "standard_metadata_t").resolved.field_type("parser_error")
    assert error.members[:2] == ["NoError", "PacketTooShort"]
    assert error.members[-2:] == ["BadVersion", "TooManyOptions"]
    assert decl(program, "ip_t").resolved == t.BitsT(32)
    meta = decl(program, "meta_t").resolved
    assert meta.field_annotations["l4_ports"] == {"field_list": ["1", "2"]}
    assert meta.field_type("pair") == t.TupleT((t.BitsT(8), t.BoolT()))
    assert decl(program, "packet_in_t").annotations == {"controller_header": ['"packet_in"']}


def test_table_properties_entries_and_annotations(constructs: CompiledProgram) -> None:
    ingress = constructs.ir.blocks["ig"]
    fwd = decl(ingress, "fwd")
    assert [k.match_kind for k in fwd.keys] == ["exact", "lpm", "ternary", "range", "optional"]
    assert fwd.keys[0].annotations == {"name": ['"dst_mac"']}
    assert fwd.default_is_const and fwd.default_action.name == "NoAction"
    assert [a.annotations for a in fwd.actions][2:] == [{"defaultonly": []}, {"tableonly": []}]
    assert fwd.properties["counters"].decl.name == "fwd_counter"
    assert fwd.properties["meters"].decl.type_ref.resolved.type_args == [t.BitsT(2)]
    assert fwd.properties["support_timeout"].value is True
    assert fwd.size.value == 1000
    acl = decl(ingress, "acl")
    assert acl.entries_are_const and not acl.default_is_const
    assert [e.priority.value if e.priority else None for e in acl.entries] == [10, 20, None]
    mask = acl.entries[0].keys[0]
    assert isinstance(mask, ir.Binary) and mask.op == "&&&" and mask.type == t.BitsT(32)
    assert isinstance(acl.entries[1].keys[0], ir.DontCare)
    assert acl.entries[1].action.args[0].value.type == t.BitsT(9)
    by_color = decl(ingress, "by_color")
    assert not by_color.entries_are_const
    assert by_color.actions[1].args[0].value.type == t.BitsT(8)
    assert decl(ingress, "to_cpu").annotations == {"id": ["0x01000042"], "priority": ["5"]}
    assert decl(ingress, "drop").annotations == {"name": ['".drop_it"']}


def test_calls_are_normalised(constructs: CompiledProgram) -> None:
    ingress = constructs.ir.blocks["ig"]
    first, second = calls_to(ingress.apply, "clamp")
    assert [a.name for a in first.args] == [None, "hi"]
    assert first.args[1].value.type == t.BitsT(8)
    assert [a.name for a in second.args] == ["v", "hi"]
    read = calls_to(ingress.apply, "read")[0]
    assert read.target.expr.type.type_args == [t.BitsT(32)]
    assert isinstance(read.args[1].value, ir.Cast) and read.args[1].value.type == t.BitsT(32)
    hashes = calls_to(ingress.apply, "hash")
    assert hashes[0].args[2].value.type == t.BitsT(32)
    assert isinstance(hashes[1].args[3].value.type, t.TupleT)
    push = calls_to(ingress.apply, "push_front")[0]
    assert push.kind == ir.CallKind.STACK_METHOD and push.args[0].value.value == 1
    counting = calls_to(ingress.apply, "apply")
    block_apply = [c for c in counting if c.kind == ir.CallKind.BLOCK_APPLY]
    assert block_apply[0].callee.name == "Counting"
    digest = calls_to(ingress.apply, "digest")[0]
    assert digest.args[1].value.type.name == "digest_t"
    lookahead = calls_to(constructs.ir.blocks["p"], "lookahead")[0]
    assert lookahead.type == t.BitsT(8)


def test_switch_on_action_run(constructs: CompiledProgram) -> None:
    ingress = constructs.ir.blocks["ig"]
    switch = next(n for n in walk(ingress.apply) if isinstance(n, ir.Switch))
    assert isinstance(switch.expr, ir.Member) and switch.expr.name == "action_run"
    assert isinstance(switch.expr.type, t.ApplyResultT) and switch.expr.type.table == "fwd"
    labels = [c.labels[0] for c in switch.cases]
    assert [lab.decl.name for lab in labels[:3]] == ["forward", "drop", "to_cpu"]
    assert switch.cases[1].body is None and isinstance(labels[3], ir.DefaultKey)


def test_select_with_tuples_masks_and_ranges(constructs: CompiledProgram) -> None:
    start = constructs.ir.blocks["p"].states[0]
    select = start.transition
    assert isinstance(select, ir.Select) and len(select.keys) == 2
    first, masked, ranged, default = (c.keyset for c in select.cases)
    assert isinstance(first, ir.ListExpr) and isinstance(first.items[1], ir.DontCare)
    assert masked.items[1].op == "&&&" and ranged.items[1].op == ".."
    assert isinstance(default, ir.DefaultKey)
    assert [c.state for c in select.cases] == ["parse_pin", "parse_eth", "parse_eth", "reject"]


def test_expression_types(constructs: CompiledProgram) -> None:
    ingress = constructs.ir.blocks["ig"]
    binaries = {n.op: n for n in walk(ingress.apply) if isinstance(n, ir.Binary)}
    assert binaries["++"].type == t.BitsT(16)
    assert binaries["|-|"].type == t.BitsT(16, signed=True)
    slices = [n for n in walk(ingress.apply) if isinstance(n, ir.Slice)]
    assert (slices[0].hi, slices[0].lo, slices[0].type) == (7, 4, t.BitsT(4))


def test_preprocessed_source_reloads_without_includes(basic: CompiledProgram) -> None:
    again = compile_source(basic.source, "basic.p4")
    assert [d.name for d in again.ir.decls] == [d.name for d in basic.ir.decls]
    broken = basic.source.replace("hdr.ipv4.ttl - 1", "hdr.ipv4.ttl - nope")
    with pytest.raises(P4Error) as info:
        compile_source(broken, "reloaded.p4")
    loc = info.value.diagnostics[0].loc
    assert loc.file.endswith("basic.p4") and loc.line == 87


def test_compile_source_with_includes_from_p4include() -> None:
    text = (P4_DIR / "basic.p4").read_text()
    compiled = compile_source(text, "inline.p4")
    assert compiled.ir.main is not None
    assert "#include" not in compiled.source


def test_v1model_2020_index_types_and_size_methods() -> None:
    compiled = compile_file(str(P4_DIR / "v1model_2020.p4"))
    ingress = compiled.ir.blocks["ig"]
    reg = decl(ingress, "r").type_ref.resolved
    assert reg.name == "register" and reg.type_args == [t.BitsT(32), t.BitsT(7)]
    partial = decl(ingress, "r2").type_ref.resolved
    assert partial.type_args == [t.BitsT(16)]
    write = calls_to(ingress.apply, "write")[1]
    assert write.args[0].value.type == t.InfIntT()  # I is unbound: an untyped index stays int
    assert write.args[1].value.type == t.BitsT(16)
    assert decl(ingress, "act").params[0].type_ref.resolved == t.BitsT(9)
    sizes = [n for n in walk(ingress.apply) if isinstance(n, ir.Binary) and n.op == "=="]
    folded = sizes[-1].left
    assert isinstance(folded, ir.IntLit) and folded.value == 24
    entries = decl(ingress, "t").entries
    assert entries[0].keys[1].op == ".." and entries[2].priority.value == 3


def test_benchmark_program_is_a_valid_500_line_program() -> None:
    from lgkit.sw.tools.bench_compile import synthetic_program

    text = synthetic_program(500)
    assert 480 <= text.count("\n") <= 520
    compiled = compile_source(text, "synthetic.p4")
    tables = [d for d in compiled.ir.blocks["ig"].locals if isinstance(d, ir.TableDecl)]
    assert len(tables) == (text.count("table t_"))


def test_serializable_enum_decays_to_its_underlying_type(constructs: CompiledProgram) -> None:
    egress = constructs.ir.blocks["eg"]
    var = next(n for n in walk(egress.apply) if isinstance(n, ir.VarDecl))
    assert isinstance(var.init, ir.Cast) and var.init.type == t.BitsT(8)
    assert isinstance(var.init.expr.type, t.EnumT) and var.init.expr.type.name == "Proto"
    equals = [n for n in walk(egress.apply) if isinstance(n, ir.Binary) and n.op == "=="]
    equal = equals[1]  # hdr.ipv4.proto == 6
    assert isinstance(equal.left, ir.Cast) and equal.left.type == t.BitsT(8)
    assert isinstance(equal.right, ir.Cast) and equal.right.expr.value == 6


def test_idioms_of_test_corpora() -> None:
    compiled = compile_file(str(P4_DIR / "idioms.p4"))
    program = compiled.ir
    make_item = decl(program, "make_item")
    assert make_item.ret.resolved.name == "item_t"
    assert [p.name for p in make_item.params] == ["tag", "counter"]
    returned = [n for n in walk(make_item.body) if isinstance(n, ir.Return)]
    assert all(r.value.type.name == "item_t" for r in returned)
    ingress = program.blocks["ig"]
    entries = decl(ingress, "by_len").entries
    assert [type(e.keys[0]).__name__ for e in entries] == ["Binary", "Binary", "Cast", "DontCare"]
    assert decl(program, "blob_t").resolved == t.TupleT((t.BitsT(8), t.VarbitT(64)))
    step_calls = [c for c in calls_to(ingress.apply, "apply") if c.kind == ir.CallKind.BLOCK_APPLY]
    assert len(step_calls) == 2 and step_calls[0].callee.name == "Step"
