"""Compile a checked TNA program: the six blocks of its one Pipeline inside Switch, bound to
slot regions (ingress and egress headers and metadata, one region per intrinsic metadata type:
the metadata layout)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lgkit.sw.exec.arch.v1model.program import CompiledV1, load_tables
from lgkit.sw.exec.interp.codegen import CodeGen
from lgkit.sw.exec.interp.exprs import unsupported
from lgkit.sw.exec.interp.instances import make_extern
from lgkit.sw.exec.interp.layout import LayoutError, field_offset, size_of
from lgkit.sw.exec.interp.packetgen import compile_parser
from lgkit.sw.exec.interp.plans import qualified
from lgkit.sw.exec.interp.scope import PacketB, Scope, Slot
from lgkit.sw.lang import ir
from lgkit.sw.lang.frontend.diagnostics import error_at
from lgkit.sw.lang.frontend.limits import deep_recursion
from lgkit.sw.lang.types import ExternT, P4Type, StructLikeT

if TYPE_CHECKING:
    from lgkit.sw.exec.externs.base import Registry

BLOCKS = ("ig_parser", "ingress", "ig_deparser", "eg_parser", "egress", "eg_deparser")
# The intrinsic metadata types (tofino1_base.p4): one slot region each, shared by the blocks
INTRINSICS = (
    "ingress_intrinsic_metadata_t", "ingress_intrinsic_metadata_for_tm_t",
    "ingress_intrinsic_metadata_from_parser_t", "ingress_intrinsic_metadata_for_deparser_t",
    "egress_intrinsic_metadata_t", "egress_intrinsic_metadata_from_parser_t",
    "egress_intrinsic_metadata_for_deparser_t", "egress_intrinsic_metadata_for_output_port_t",
)
# ucast_egress_port before ingress writes it: no port (Tofino sends a packet whose unicast port
# was never written nowhere, unless it is multicast); 9-bit writes can never make it
NO_PORT = 1 << 9


def _block(program: ir.Program, arg: ir.Argument) -> ir.ParserDecl | ir.ControlDecl:
    e = arg.value
    if isinstance(e, ir.Call) and isinstance(e.target, ir.PathExpr):
        decl = next((d for d in program.decls if isinstance(d, ir.ParserDecl | ir.ControlDecl)
                     and d.name == e.target.name and not d.is_type), None)
        if decl is not None:
            if e.args:
                raise unsupported(e, "constructor arguments of Pipeline blocks")
            return decl
    raise unsupported(e, "this Pipeline argument (a parser or control constructed in place)")


def pipeline_blocks(program: ir.Program) -> list[ir.ParserDecl | ir.ControlDecl]:
    """The six blocks of the Pipeline that `Switch(pipe) main` runs (one pipe only)."""
    main = program.main
    assert main is not None
    given = [a for a in main.args if not isinstance(a.value, ir.DontCare)]
    if len(given) != 1:
        raise unsupported(main, "a Switch of more than one Pipeline (pipe1..pipe3)")
    pipe = given[0].value
    inst = pipe.decl if isinstance(pipe, ir.PathExpr) else None
    if not isinstance(inst, ir.InstanceDecl) or inst.type_ref.name != "Pipeline":
        raise unsupported(pipe, "a Switch argument other than a Pipeline instance")
    return [_block(program, a) for a in inst.args]


def compile_tna(program: ir.Program, externs: Registry, optimise: bool = True) -> CompiledV1:
    """Generate and load the code of a checked TNA program (P4Error on unsupported constructs).
    CompiledV1.sm maps "type.field" of the intrinsic metadata to its slot."""
    try:
        with deep_recursion():
            return _compile(program, externs, optimise)
    except LayoutError as exc:
        raise error_at(program.loc, f"unsupported: {exc}") from None


def _intrinsic_types(decls: list[Any]) -> dict[str, StructLikeT]:
    found: dict[str, StructLikeT] = {}
    for decl in decls:
        for p in decl.params:
            t = p.type_ref.resolved
            if isinstance(t, StructLikeT) and t.name in INTRINSICS:
                found[t.name] = t
    return found


def _compile(program: ir.Program, externs: Registry, optimise: bool) -> CompiledV1:
    decls = pipeline_blocks(program)
    gen = CodeGen(program, externs)
    gen.ns["_logs"] = gen.logs
    for d in program.decls:  # extern objects instantiated at top level
        if isinstance(d, ir.InstanceDecl) and isinstance(d.type_ref.resolved, ExternT):
            binding = make_extern(gen, d, qualified("", d))
            gen.global_scope.bind(d, binding)
            gen.externs.append(binding)
    for parser, wanted in ((decls[0], INTRINSICS[0]), (decls[3], INTRINSICS[4])):
        if wanted not in _intrinsic_types([parser]):  # what comes before the packet
            raise unsupported(parser, f"a TNA parser without its {wanted} parameter")
    intrinsic = {name: gen.alloc(t, program) for name, t in _intrinsic_types(decls).items()}
    tm = intrinsic.get("ingress_intrinsic_metadata_for_tm_t")
    if tm is not None:
        assert isinstance(tm.type, StructLikeT)
        gen.init[tm.base + field_offset(tm.type, "ucast_egress_port")] = NO_PORT
    sides: dict[str, tuple[Slot, Slot]] = {}
    for side, parser in (("ig", decls[0]), ("eg", decls[3])):
        if not isinstance(parser, ir.ParserDecl) or len(parser.params) < 3:
            raise unsupported(parser, f"a TNA {side} parser without packet, headers, metadata")
        sides[side] = (gen.alloc(_resolved(parser.params[1]), parser),
                       gen.alloc(_resolved(parser.params[2]), parser))
    gen.hdr, gen.meta = sides["ig"]
    gen.kept_regions.extend([*intrinsic.values(), *sides["eg"]])
    blocks: dict[str, str] = {}
    for role, decl in zip(BLOCKS, decls, strict=True):
        scope = Scope(gen.global_scope, decl.name + ".")
        user = iter(sides["ig" if role in BLOCKS[:3] else "eg"])
        for p in decl.params:
            t = p.type_ref.resolved
            if isinstance(t, ExternT) and t.name in ("packet_in", "packet_out"):
                scope.bind(p, PacketB("in" if t.name == "packet_in" else "out"))
            elif isinstance(t, StructLikeT) and t.name in intrinsic:
                scope.bind(p, intrinsic[t.name])
            else:
                region = next(user, None)
                if region is None:
                    raise unsupported(p, f"parameter '{p.name}' of a TNA {role} block")
                scope.bind(p, region)
        if role in ("ig_parser", "eg_parser"):
            if not isinstance(decl, ir.ParserDecl):
                raise unsupported(decl, f"a control where the TNA {role} goes")
            blocks[role] = compile_parser(gen, decl, scope, decl.name + ".")
        else:
            if not isinstance(decl, ir.ControlDecl):
                raise unsupported(decl, f"a parser where the TNA {role} goes")
            blocks[role] = gen.compile_control(decl, scope, decl.name + ".")
    ns = gen.build(list(blocks.values()), optimise)
    ns["_tna_types"] = {name: slot.type for name, slot in intrinsic.items()}
    tables, direct_counters, _ = load_tables(gen, ns)  # direct meters: no DirectMeter extern
    ig_hdr, ig_md = sides["ig"]
    return CompiledV1(
        ns=ns, blocks={role: ns[fn] for role, fn in blocks.items()},
        template=list(gen.init)[: gen.width], sm=_intrinsic_slots(intrinsic, sides),
        meta_base=ig_md.base, meta_size=size_of(ig_md.type), field_lists={},
        tables=tables, externs=gen.externs, value_sets=gen.value_sets, logs=gen.logs,
        source=gen.source, outside=gen.boundary, optimised=optimise,
        hdr_range=(ig_hdr.base, ig_hdr.base + size_of(ig_hdr.type)),
        direct_counters=direct_counters,
    )


def _resolved(p: ir.Param) -> P4Type:
    t = p.type_ref.resolved
    assert t is not None
    return t


def _intrinsic_slots(intrinsic: dict[str, Slot], sides: dict[str, tuple[Slot, Slot]]
                     ) -> dict[str, int]:
    """"type.field" -> slot for the intrinsic metadata; "ig_hdr" .. "eg_md" -> region base."""
    out: dict[str, int] = {}
    for name, slot in intrinsic.items():
        t = slot.type
        assert isinstance(t, StructLikeT)
        for fname, _ in t.fields:
            out[f"{name}.{fname}"] = slot.base + field_offset(t, fname)
    for side, (hdr, md) in sides.items():
        out[f"{side}_hdr"], out[f"{side}_md"] = hdr.base, md.base
    return out
