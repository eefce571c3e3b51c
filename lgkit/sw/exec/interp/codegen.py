"""Code generation of a checked v1model program into one Python module of plain functions.

Every per-packet value lives in one flat list S (see layout.py); each parser, control, action,
function and table becomes one Python function `f(S, P)` (P is the runtime.Ctx). The module
is compiled once per program, so no AST is walked per packet.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lgkit.sw.exec.interp import hashes, runtime
from lgkit.sw.exec.interp.calls import Calls, ordered_args
from lgkit.sw.exec.interp.exprs import Place, agg_eq, unsupported
from lgkit.sw.exec.interp.fnctx import FnCtx
from lgkit.sw.exec.interp.inline import inline_module
from lgkit.sw.exec.interp.instances import make_extern
from lgkit.sw.exec.interp.layout import (
    LayoutError,
    field_offset,
    is_scalar,
    scalar_width,
    size_of,
    template,
)
from lgkit.sw.exec.interp.packetgen import compile_parser
from lgkit.sw.exec.interp.plans import TablePlan, qualified
from lgkit.sw.exec.interp.scope import (
    ActionB,
    ConstVal,
    ExternB,
    FuncB,
    InstanceB,
    PacketB,
    PyVar,
    RefSlot,
    Scope,
    Slot,
)
from lgkit.sw.exec.interp.slotlocals import Outside
from lgkit.sw.exec.interp.stmts import Stmts
from lgkit.sw.exec.interp.tablegen import table_plan
from lgkit.sw.exec.interp.tables import KeySpec
from lgkit.sw.exec.interp.value_sets import ValueSet
from lgkit.sw.lang import ir
from lgkit.sw.lang.frontend.diagnostics import error_at
from lgkit.sw.lang.types import ExternT, P4Type, StructLikeT, ValueSetT

if TYPE_CHECKING:
    from lgkit.sw.exec.externs.base import Registry

# Scalar values (slots) one packet's state may hold: p4/linkguardian.p4 needs 296; a stack of
# a million headers would cost hundreds of MB per packet.
MAX_PACKET_SLOTS = 1 << 16


class CodeGen:
    """Compiles a whole program; `build()` returns the executed module namespace."""

    def __init__(self, program: ir.Program, externs: Registry):
        self.program = program
        self.extern_registry = externs  # the architecture's externs (exec/externs/)
        self.nslots = 0
        self.init: list = []
        self.functions: list[str] = []
        self.ns: dict[str, Any] = {
            "_si": runtime.stack_index,
            "_shl": runtime.shl,
            "_div": runtime.div,
            "_mod": runtime.mod,
            "_read_bits": runtime.read_bits,
            "_PErr": runtime.ParserError,
            "_SIE": runtime.StackIndexError,
            "_LOOP": runtime.LoopLimit,
            "_EXIT": runtime.EXIT,
            "_agg_eq": agg_eq,
            "_pack": hashes.pack_bits,
            "_csum16_bits": hashes.csum16_bits,
            "_push_front": runtime.push_front,
            "_pop_front": runtime.pop_front,
            "_fmt": runtime.format_log,
        }
        self._nconst = 0
        self._nfn = 0
        self.action_id = 0
        self.tables: list[TablePlan] = []
        self.externs: list[ExternB] = []
        self.value_sets: dict[str, ValueSet] = {}
        self.global_scope = Scope()
        self.stmts = Stmts()
        self.calls = Calls(self)
        self.error_type: Any = None
        self.sm: Slot | None = None
        self.meta: Slot | None = None
        self.hdr: Slot | None = None
        self.kept_regions: list[Slot] = []  # more regions code outside the module uses
        self.logs: list[str] = []
        self.anon_field_lists: dict[int, list[int]] = {}
        self.source = ""  # the module's text before inlining, once built
        self.boundary: Outside | None = None  # what code outside the module uses, once built
        self.width: int | None = None  # slots S needs once built (None: all)

    # ------------------------------------------------------------------ resources

    def alloc(self, t: P4Type, at: ir.Node) -> Slot:
        try:
            n = size_of(t)
        except LayoutError as exc:
            raise error_at(at.loc, f"unsupported: {exc}") from None
        if self.nslots + n > MAX_PACKET_SLOTS:
            raise error_at(at.loc, f"unsupported: a packet's headers, metadata and locals need "
                           f"more than {MAX_PACKET_SLOTS} values (a header stack of "
                           "millions?); the built-in target copies them for every packet")
        base = self.nslots
        self.nslots += n
        self.init.extend(template(t))
        return Slot(base, t)

    def const_obj(self, value: Any) -> str:
        self._nconst += 1
        name = f"_c{self._nconst}"
        self.ns[name] = value
        return name

    def fn_name(self, kind: str) -> str:
        self._nfn += 1
        return f"{kind}{self._nfn}"

    def error_code(self, member: str) -> int:
        t = self.error_type
        if t is None or member not in t.members:
            return 0
        return t.values.get(member, t.members.index(member))

    def sm_ref(self, fieldname: str) -> str | None:

        if self.sm is None or not isinstance(self.sm.type, StructLikeT):
            return None
        try:
            return f"S[{self.sm.base + field_offset(self.sm.type, fieldname)}]"
        except KeyError:
            return None

    # ------------------------------------------------------------------ globals

    def lookup_global(self, decl: Any) -> Any:
        """Binding of a top-level declaration, compiling actions/functions on first use."""
        found = self.global_scope.get(decl)
        if found is not None:
            return found
        if isinstance(decl, ir.ActionDecl):
            return self.compile_action(decl, self.global_scope, "")
        if isinstance(decl, ir.FunctionDecl):
            return self.compile_function(decl, self.global_scope)
        if isinstance(decl, ir.ConstDecl):
            return None
        return None

    # ------------------------------------------------------------------ blocks

    def compile_action(self, decl: ir.ActionDecl, scope: Scope, prefix: str) -> ActionB:
        fname = self.fn_name("a")
        self.action_id += 1
        binding = ActionB(fname, qualified(prefix, decl), self.action_id, decl)
        scope.bind(decl, binding)
        inner = Scope(scope, prefix)
        fx = FnCtx(self, inner, "action", fname)
        pyargs = self._bind_params(decl.params, inner, binding.param_slots, fx)
        self.stmts.block(fx, decl.body)
        args = "".join(", " + a for a in pyargs)
        self.functions.append(fx.source(f"def {fname}(S, P{args}):"))
        return binding

    def compile_function(self, decl: ir.FunctionDecl, scope: Scope) -> FuncB:
        if decl.type_params:
            raise unsupported(decl, "generic functions")
        fname = self.fn_name("f")
        binding = FuncB(fname, decl)
        scope.bind(decl, binding)
        inner = Scope(scope, scope.prefix)
        fx = FnCtx(self, inner, "function", fname)
        fx.ret_type = decl.ret.resolved
        pyargs = self._bind_params(decl.params, inner, binding.param_slots, fx)
        self.stmts.block(fx, decl.body)
        args = "".join(", " + a for a in pyargs)
        self.functions.append(fx.source(f"def {fname}(S, P{args}):"))
        return binding

    def _bind_params(
        self, params: list[ir.Param], scope: Scope, slots: dict[str, Any], fx: FnCtx
    ) -> list[str]:
        """Scalar in/directionless params become Python arguments, the rest slots."""
        pyargs = []
        for p in params:
            t = p.type_ref.resolved
            if t is None:
                raise unsupported(p, f"parameter '{p.name}' without a type")
            if p.direction in ("", "in") and is_scalar(t):
                name = f"v_{p.name}"
                scope.bind(p, PyVar(name, t))
                pyargs.append(name)
            else:
                slot = self.alloc(t, p)
                scope.bind(p, slot)
                slots[p.name] = slot
        return pyargs

    def compile_locals(
        self, decls: list[ir.Decl], scope: Scope, prefix: str, fx: FnCtx, body: object = None
    ) -> None:
        """Bind a block's local declarations; parser/control instances last, with the apply
        sites found in `body` (to pass arguments by reference where that is exact)."""
        blocks = [d for d in decls if isinstance(d, ir.InstanceDecl)
                  and isinstance(self.type_decl(d.type_ref.name), ir.ControlDecl | ir.ParserDecl)]
        for d in decls:
            if d in blocks:
                continue
            if isinstance(d, ir.VarDecl):
                slot = self.alloc(ir.checked(d.type_ref.resolved), d)
                scope.bind(d, slot)
                if d.init is not None:
                    self.stmts.assign_code(fx, Place(str(slot.base), slot.base, slot.type), d.init)
            elif isinstance(d, ir.ConstDecl):
                scope.bind(d, ConstVal(fx.eg.const_code(d, d), d.type_ref.resolved))
            elif isinstance(d, ir.ActionDecl):
                self.compile_action(d, scope, prefix)
            elif isinstance(d, ir.TableDecl):
                self.compile_table(d, scope, prefix)
            elif isinstance(d, ir.InstanceDecl):
                self.compile_instance(d, scope, prefix)
            elif isinstance(d, ir.FunctionDecl):
                self.compile_function(d, scope)
            else:
                raise unsupported(d, f"local declaration {type(d).__name__}")
        if blocks:
            sites = apply_sites(body)
            for d in blocks:
                target = self.type_decl(d.type_ref.name)
                calls = sites.get(id(d), [])
                block = self.compile_sub_block(target, qualified(prefix, d) + ".", d, scope,
                                               calls)
                scope.bind(d, block)

    def compile_instance(self, d: ir.InstanceDecl, scope: Scope, prefix: str) -> None:
        if d.type_ref.name == "value_set":
            self.compile_value_set(d, scope, qualified(prefix, d))
            return
        binding = make_extern(self, d, qualified(prefix, d), scope)
        scope.bind(d, binding)
        self.externs.append(binding)

    def compile_value_set(self, d: ir.InstanceDecl, scope: Scope, qname: str) -> None:
        vtype = d.type_ref.resolved
        assert isinstance(vtype, ValueSetT)
        elem = vtype.elem
        fields = elem.fields if isinstance(elem, StructLikeT) else [("", elem)]
        specs = []
        for fname, ftype in fields:
            anns = elem.field_annotations.get(fname, {}) if isinstance(elem, StructLikeT) else {}
            kind = "".join(anns.get("match", [])).strip() or "exact"
            specs.append(KeySpec(fname, kind, scalar_width(ftype)))
        value_set = ValueSet(qname, vtype.size, specs)
        self.value_sets[qname] = value_set
        scope.bind(d, ExternB(self.const_obj(value_set), "value_set", qname, value_set))

    def type_decl(self, name: str) -> Any:
        for d in self.program.decls:
            if getattr(d, "name", None) == name and isinstance(
                d, ir.ControlDecl | ir.ParserDecl
            ):
                if not d.is_type:
                    return d
        return None

    def compile_sub_block(
        self, decl: Any, prefix: str, at: ir.InstanceDecl, caller: Scope, sites: list[ir.Call]
    ) -> InstanceB:
        """A control or parser instantiated inside another block (its own code and state)."""
        scope = Scope(self.global_scope, prefix)
        self._bind_ctor_args(decl, at, scope)
        refs = self._by_reference(decl, caller, sites)
        params: list[Slot | None] = []
        for i, p in enumerate(decl.params):
            t = p.type_ref.resolved
            if isinstance(t, ExternT) and t.name in ("packet_in", "packet_out"):
                scope.bind(p, PacketB("in" if t.name == "packet_in" else "out"))
                params.append(None)
                continue
            if i in refs:
                ref = RefSlot(refs[i], t)
                scope.bind(p, ref)
                params.append(ref)
                continue
            slot = self.alloc(t, p)
            scope.bind(p, slot)
            params.append(slot)
        if isinstance(decl, ir.ParserDecl):

            fname = compile_parser(self, decl, scope, prefix, sub=True)
        else:
            fname = self.compile_control(decl, scope, prefix)
        return InstanceB(fname, decl, params)

    def _by_reference(self, decl: Any, caller: Scope, sites: list[ir.Call]) -> dict[int, int]:
        """Parameter index -> slot base of the inout/out parameters that every apply site
        passes as the same fixed variable, none overlapping another (so that binding them by
        reference behaves exactly like copy-in/copy-out)."""

        if not sites:
            return {}
        fx = FnCtx(self, caller, "control", "_ref")
        found: dict[int, int] = {}
        for i, p in enumerate(decl.params):
            if p.direction not in ("inout", "out"):
                continue
            bases = set()
            for call in sites:
                arg = ordered_args(call, decl.params)[i]
                if arg is None or not fx.eg.is_place(arg):
                    break
                place = fx.eg.place(arg)
                if place.static is None or fx.lines:
                    break
                bases.add(place.static)
            else:
                if len(bases) == 1:
                    found[i] = bases.pop()
        spans = sorted((base, base + size_of(decl.params[i].type_ref.resolved), i)
                       for i, base in found.items())
        for (_, end, i), (start, _, j) in zip(spans, spans[1:], strict=False):
            if start < end:
                found.pop(i, None)
                found.pop(j, None)
        return found

    def _bind_ctor_args(self, decl: Any, at: ir.InstanceDecl, scope: Scope) -> None:
        """Constructor parameters of a parser/control instance are compile-time constants."""
        if not decl.ctor_params:
            return

        fx = FnCtx(self, self.global_scope, "control", "ctor")
        call = ir.Call(at.loc, ir.PathExpr(at.loc, decl.name), at.args)
        for p, arg in zip(decl.ctor_params, ordered_args(call, decl.ctor_params), strict=True):
            if arg is None:
                raise unsupported(at, f"missing constructor argument '{p.name}'")
            code = fx.eg.ex(arg)
            if fx.lines:
                raise unsupported(arg, "a constructor argument that is not a constant")
            scope.bind(p, ConstVal(code, p.type_ref.resolved))

    def compile_control(self, decl: ir.ControlDecl, scope: Scope, prefix: str) -> str:
        fname = self.fn_name("c")
        fx = FnCtx(self, scope, "control", fname)
        self.compile_locals(decl.locals, scope, prefix, fx, decl.apply)
        if decl.apply is not None:
            self.stmts.block(fx, decl.apply)
        self.functions.append(fx.source(f"def {fname}(S, P):"))
        return fname

    def compile_table(self, d: ir.TableDecl, scope: Scope, prefix: str) -> None:

        plan = table_plan(self, d, scope, prefix)
        self.tables.append(plan)

    # ------------------------------------------------------------------ whole program

    def outside(self, blocks: list[str]) -> Outside:
        """What code outside the generated module uses: the slots of the v1model parameters
        (headers, metadata, standard_metadata) and of the field lists; the blocks and the
        tables' actions (called by reference)."""
        kept: set[int] = set()
        for region in (self.hdr, self.meta, self.sm, *self.kept_regions):
            if region is not None:
                kept.update(range(region.base, region.base + size_of(region.type)))
        for slots in self.anon_field_lists.values():
            kept.update(slots)
        actions = {a.fn for plan in self.tables for a in plan.actions}
        return Outside(frozenset(kept), frozenset(blocks) | actions)

    def build(self, blocks: list[str], optimise: bool = True) -> dict[str, Any]:
        """Compile the module (`blocks`: the names of its top-level block functions); without
        `optimise`, as generated (no inlining, peephole or slot-locals: interp/inline.py)."""
        self.source = source = "\n".join(self.functions)
        self.boundary = self.outside(blocks)
        try:
            if optimise:
                code, self.width = inline_module(source, self.boundary)
            else:
                code = compile(source, "<lgkit-generated>", "exec")
        except SyntaxError as exc:  # a code generator bug: report it clearly
            raise RuntimeError(f"generated code does not compile: {exc}") from exc
        exec(code, self.ns)
        return self.ns



def apply_sites(body: object) -> dict[int, list[ir.Call]]:
    """InstanceDecl id -> the `instance.apply(...)` calls found in a statement tree."""
    sites: dict[int, list[ir.Call]] = {}

    def visit(node: object) -> None:
        if isinstance(node, ir.Call) and node.kind == ir.CallKind.BLOCK_APPLY:
            inst = getattr(getattr(node.target, "expr", None), "decl", None)
            if inst is not None:
                sites.setdefault(id(inst), []).append(node)
        if isinstance(node, list):
            for item in node:
                visit(item)
        elif isinstance(node, ir.Node):
            for value in vars(node).values():
                if isinstance(value, list | ir.Node) and not isinstance(value, ir.Decl):
                    visit(value)
                elif isinstance(value, ir.VarDecl | ir.ConstDecl):
                    visit(value)

    visit(body)
    return sites
