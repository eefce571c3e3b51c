"""Compile a checked v1model program: bind V1Switch's six blocks to shared slot regions (headers,
metadata, standard_metadata: the metadata layout)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lgkit.sw.exec.interp.codegen import CodeGen
from lgkit.sw.exec.interp.exprs import unsupported
from lgkit.sw.exec.interp.instances import make_extern
from lgkit.sw.exec.interp.layout import LayoutError, field_offset, size_of
from lgkit.sw.exec.interp.packetgen import compile_parser
from lgkit.sw.exec.interp.plans import qualified
from lgkit.sw.exec.interp.scope import PacketB, Scope, Slot
from lgkit.sw.exec.interp.slotlocals import Outside
from lgkit.sw.exec.interp.tablegen import build_table
from lgkit.sw.exec.interp.tables import Table
from lgkit.sw.lang import ir
from lgkit.sw.lang.frontend.diagnostics import error_at
from lgkit.sw.lang.frontend.limits import deep_recursion
from lgkit.sw.lang.types import EnumT, ExternT, P4Type, StructLikeT

if TYPE_CHECKING:
    from lgkit.sw.exec.externs.base import Registry

BLOCKS = ("parser", "verify", "ingress", "egress", "compute", "deparser")


@dataclass
class CompiledV1:
    """Everything the pipeline needs from code generation."""

    ns: dict[str, Any]
    blocks: dict[str, Any]
    template: list
    sm: dict[str, int]  # standard_metadata field -> slot
    meta_base: int
    meta_size: int
    field_lists: dict[int, list[int]]  # field list id -> slots of user metadata
    tables: dict[str, Table]
    externs: list[Any]
    value_sets: dict[str, Any]
    logs: list[str]
    source: str  # the generated module before inlining (interp/inline.py)
    hdr_range: tuple[int, int] = (0, 0)
    direct_counters: dict[str, str] = field(default_factory=dict)
    direct_meters: dict[str, str] = field(default_factory=dict)
    empty_blocks: frozenset[str] = frozenset()  # controls with nothing to run (no locals)
    outside: Outside | None = None  # what code outside the module uses (slotlocals.py)
    optimised: bool = True  # inlined, peephole-optimised, slot-locals (CodeGen.build)


def _block_decl(program: ir.Program, arg: ir.Expr) -> tuple[Any, str]:
    """The parser/control declaration an argument of V1Switch instantiates, and its name."""
    if isinstance(arg, ir.Call) and isinstance(arg.target, ir.PathExpr):
        decl = arg.target.decl
        if not isinstance(decl, ir.ParserDecl | ir.ControlDecl):
            decl = _find(program, arg.target.name)
        if decl is not None and arg.args:
            raise unsupported(arg, "constructor arguments of V1Switch blocks")
        return decl, decl.name if decl is not None else ""
    if isinstance(arg, ir.PathExpr):
        inst = arg.decl
        if isinstance(inst, ir.InstanceDecl):
            return _find(program, inst.type_ref.name), inst.name
    raise unsupported(arg, "this V1Switch argument")


def _find(program: ir.Program, name: str) -> Any:
    for d in program.decls:
        if isinstance(d, ir.ParserDecl | ir.ControlDecl) and d.name == name and not d.is_type:
            return d
    return None


def _main(program: ir.Program) -> ir.InstanceDecl:
    main = program.main or next(d for d in program.decls
                                if isinstance(d, ir.InstanceDecl) and d.name == "main")
    if len(main.args) != 6:
        raise unsupported(main, "V1Switch with other than six blocks")
    return main


def compile_v1model(program: ir.Program, externs: Registry, optimise: bool = True
                    ) -> CompiledV1:
    """Generate and load the code of a checked program (P4Error on unsupported constructs);
    `optimise` False runs the generated code as generated (CodeGen.build)."""
    try:
        with deep_recursion():
            return _compile(program, externs, optimise)
    except LayoutError as exc:
        raise error_at(program.loc, f"unsupported: {exc}") from None


def _compile(program: ir.Program, externs: Registry, optimise: bool) -> CompiledV1:
    main = _main(program)
    gen = CodeGen(program, externs)
    gen.ns["_logs"] = gen.logs
    decls = [_block_decl(program, a.value) for a in main.args]
    for d in program.decls:  # extern objects instantiated at top level
        if isinstance(d, ir.InstanceDecl) and isinstance(d.type_ref.resolved, ExternT):
            binding = make_extern(gen, d, qualified("", d))
            gen.global_scope.bind(d, binding)
            gen.externs.append(binding)
    parser_decl = decls[0][0]
    if not isinstance(parser_decl, ir.ParserDecl) or len(parser_decl.params) < 4:
        raise unsupported(main, "a V1Switch parser without the four v1model parameters")
    hdr_t, meta_t, sm_t = (ir.checked(p.type_ref.resolved) for p in parser_decl.params[1:4])
    hdr = gen.alloc(hdr_t, parser_decl)
    meta = gen.alloc(meta_t, parser_decl)
    sm = gen.alloc(sm_t, parser_decl)
    gen.hdr, gen.meta, gen.sm = hdr, meta, sm
    if isinstance(sm_t, StructLikeT):
        pe = sm_t.field_type("parser_error")
        if isinstance(pe, EnumT):
            gen.error_type = pe
    regions = {"hdr": hdr, "meta": meta, "sm": sm}
    layouts = {
        "parser": ["packet_in", "hdr", "meta", "sm"],
        "verify": ["hdr", "meta"],
        "ingress": ["hdr", "meta", "sm"],
        "egress": ["hdr", "meta", "sm"],
        "compute": ["hdr", "meta"],
        "deparser": ["packet_out", "hdr"],
    }
    blocks: dict[str, str] = {}
    for role, (decl, name) in zip(BLOCKS, decls, strict=True):
        if decl is None:
            raise unsupported(main, f"the {role} block")
        scope = Scope(gen.global_scope, name + ".")
        for p, what in zip(decl.params, layouts[role], strict=False):
            if what == "packet_in":
                scope.bind(p, PacketB("in"))
            elif what == "packet_out":
                scope.bind(p, PacketB("out"))
            else:
                scope.bind(p, regions[what])
        if role == "parser":
            blocks[role] = compile_parser(gen, decl, scope, name + ".")
        else:
            blocks[role] = gen.compile_control(decl, scope, name + ".")
    ns = gen.build(list(blocks.values()), optimise)
    tables, direct_counters, direct_meters = load_tables(gen, ns)
    return CompiledV1(
        ns=ns,
        blocks={role: ns[fn] for role, fn in blocks.items()},
        template=list(gen.init)[: gen.width],  # the slots that became locals: not in S
        sm=_sm_slots(sm),
        meta_base=meta.base,
        meta_size=size_of(meta_t),
        field_lists={**_field_lists(meta, program), **gen.anon_field_lists},
        tables=tables,
        externs=gen.externs,
        value_sets=gen.value_sets,
        logs=gen.logs,
        source=gen.source,
        outside=gen.boundary,
        optimised=optimise,
        direct_counters=direct_counters,
        direct_meters=direct_meters,
        hdr_range=(hdr.base, hdr.base + size_of(hdr_t)),
        empty_blocks=frozenset(role for role, (decl, _) in zip(BLOCKS, decls, strict=True)
                               if isinstance(decl, ir.ControlDecl) and not decl.locals
                               and (decl.apply is None or not decl.apply.stmts)),
    )


def load_tables(gen: CodeGen, ns: dict[str, Any]
                ) -> tuple[dict[str, Table], dict[str, str], dict[str, str]]:
    """The tables of the loaded module (by name), and its direct counters and meters (name ->
    their table)."""
    tables: dict[str, Table] = {}
    direct_counters: dict[str, str] = {}
    direct_meters: dict[str, str] = {}
    for plan in gen.tables:
        table = build_table(plan, ns)
        ns[plan.var] = table
        tables[plan.qname] = table
        if plan.direct_counter:
            direct_counters[plan.direct_counter] = plan.qname
        if plan.direct_meter:
            direct_meters[plan.direct_meter] = plan.qname
    return tables, direct_counters, direct_meters


def _sm_slots(sm: Slot) -> dict[str, int]:
    t = sm.type
    assert isinstance(t, StructLikeT)
    return {name: sm.base + field_offset(t, name) for name, _ in t.fields}


def _field_lists(meta: Slot, program: ir.Program) -> dict[int, list[int]]:
    """@field_list(ids...) annotated user metadata fields (nested structs included); an id is
    an integer literal or the name of a top-level integer constant."""
    out: dict[int, list[int]] = {}
    consts = {d.name: d.value for d in program.decls
              if isinstance(d, ir.ConstDecl) and isinstance(d.value, int)}

    def field_list_id(tok: str, struct: str) -> int:
        if tok in consts:
            return int(consts[tok])
        try:
            return int(tok, 0)
        except ValueError:
            decl = next((d for d in program.decls
                         if isinstance(d, ir.TypeDecl) and d.name == struct), program)
            raise error_at(decl.loc, f"@field_list({tok}): not an integer or an integer "
                                     "constant") from None

    def walk(t: P4Type, base: int) -> None:
        if not isinstance(t, StructLikeT) or t.kind != "struct":
            return
        for name, ft in t.fields:
            off = base + field_offset(t, name)
            tokens = t.field_annotations.get(name, {}).get("field_list")
            if tokens:
                for tok in " ".join(tokens).replace(",", " ").split():
                    ident = field_list_id(tok, t.name)
                    out.setdefault(ident, []).extend(range(off, off + size_of(ft)))
            walk(ft, off)

    walk(meta.type, meta.base)
    return out
