"""Statement code generation: assignments, conditionals, switch, exit/return, locals, calls."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lgkit.sw.exec.interp.exprs import ExprGen, Place, fit, unsupported
from lgkit.sw.exec.interp.layout import is_scalar, size_of, template
from lgkit.sw.exec.interp.scope import ConstVal, PyVar, TableB
from lgkit.sw.lang import ir
from lgkit.sw.lang.types import BitsT, P4Type, StackT

if TYPE_CHECKING:
    from lgkit.sw.exec.interp.fnctx import FnCtx


class Stmts:
    """Statement compiler (stateless; everything lives in the FnCtx)."""

    def block(self, fx: FnCtx, b: ir.Stmt) -> None:
        if isinstance(b, ir.Block):
            for s in b.stmts:
                self.stmt(fx, s)
        else:
            self.stmt(fx, b)

    def stmt(self, fx: FnCtx, s: ir.Stmt) -> None:
        method = getattr(self, "_st_" + type(s).__name__, None)
        if method is None:
            raise unsupported(s, f"statement {type(s).__name__}")
        method(fx, s)

    def _st_Block(self, fx: FnCtx, s: ir.Block) -> None:
        self.block(fx, s)

    def _st_Empty(self, fx: FnCtx, s: ir.Empty) -> None:
        return

    def _st_Exit(self, fx: FnCtx, s: ir.Exit) -> None:
        fx.line("raise _EXIT")

    def _st_Break(self, fx: FnCtx, s: ir.Break) -> None:
        fx.line("break")

    def _st_Continue(self, fx: FnCtx, s: ir.Continue) -> None:
        fx.line("continue")

    def _count_iteration(self, fx: FnCtx, s: ir.Stmt) -> None:
        """The loop back-edge's bound: every iteration of every loop counts towards the pass's
        max_loop_iterations (pipeline.py); past it the pass ends (LoopLimit names the loop)."""
        fx.line("P.loops += 1")
        fx.line("if P.loops > _loop_limit:")
        with fx.indent():
            fx.line(f"raise _LOOP({str(s.loc)!r})")

    def _st_For(self, fx: FnCtx, s: ir.For) -> None:
        """A Python `while True` loop; the update runs at the top of every iteration but the
        first, so that `continue` (a Python continue) still runs it."""
        for init in s.init:
            self.stmt(fx, init)
        first = fx.temp()
        if s.update:
            fx.line(f"{first} = True")
        fx.line("while True:")
        with fx.indent():
            if s.update:
                fx.line(f"if {first}:")
                with fx.indent():
                    fx.line(f"{first} = False")
                fx.line("else:")
                with fx.indent():
                    for update in s.update:
                        self.stmt(fx, update)
            if s.cond is not None:
                fx.line(f"if not ({fx.eg.ex(s.cond)}):")
                with fx.indent():
                    fx.line("break")
            self._count_iteration(fx, s)
            self.block(fx, s.body)

    def _st_ForIn(self, fx: FnCtx, s: ir.ForIn) -> None:
        slot = fx.gen.alloc(ir.checked(s.var.type_ref.resolved), s.var)
        fx.scope.bind(s.var, slot)
        if s.hi is None:
            self._for_in_elements(fx, s, Place(str(slot.base), slot.base, slot.type))
            return
        lo, hi, value = fx.temp(), fx.temp(), fx.temp()
        fx.line(f"{lo} = {fx.eg.ex(s.lo)}")
        fx.line(f"{hi} = {fx.eg.ex(s.hi)}")
        fx.line(f"for {value} in range({lo}, {hi} + 1):")
        with fx.indent():
            self._count_iteration(fx, s)
            fx.line(f"S[{slot.base}] = {value}")
            self.block(fx, s.body)

    def _for_in_elements(self, fx: FnCtx, s: ir.ForIn, var: Place) -> None:
        """Over a header stack: element i (all `size` of them, valid or not) is copied into
        the variable at the start of iteration i."""
        index = fx.temp()
        stack = fx.eg.place(s.lo)
        stride = size_of(var.type)
        assert isinstance(s.lo.type, StackT)  # the checker lets for-in run over stacks only
        fx.line(f"for {index} in range({s.lo.type.size}):")
        with fx.indent():
            self._count_iteration(fx, s)
            start = f"{stack.at(1)} + {stride} * {index}"
            fx.line(f"{var.span()} = S[{start}:{start} + {stride}]")
            self.block(fx, s.body)

    def _st_Return(self, fx: FnCtx, s: ir.Return) -> None:
        if s.value is None:
            fx.line("return")
        elif isinstance(s.value, ir.ListExpr | ir.StructExpr):
            fx.line(f"return {fx.eg.aggregate(s.value, fx.ret_type)}")
        else:
            fx.line(f"return {fx.eg.ex(s.value)}")

    def _st_If(self, fx: FnCtx, s: ir.If) -> None:
        """An else-if chain becomes a flat Python elif chain (as long as each condition needs
        no statements of its own), so long chains do not nest the generated code."""
        fx.line(f"if {fx.eg.ex(s.cond)}:")
        with fx.indent():
            self.block(fx, s.then)
        other = s.other
        while isinstance(other, ir.If):
            cond, body = fx.eg.captured(other.cond)
            if body:
                break
            fx.line(f"elif {cond}:")
            with fx.indent():
                self.block(fx, other.then)
            other = other.other
        if other is not None:
            fx.line("else:")
            with fx.indent():
                self.block(fx, other)

    def _st_CallStmt(self, fx: FnCtx, s: ir.CallStmt) -> None:
        fx.gen.calls.call_stmt(fx, s.call)

    def _st_VarDecl(self, fx: FnCtx, s: ir.VarDecl) -> None:
        slot = fx.gen.alloc(ir.checked(s.type_ref.resolved), s)
        fx.scope.bind(s, slot)
        place = Place(str(slot.base), slot.base, slot.type)
        if s.init is not None:
            self.assign_code(fx, place, s.init)
        elif is_scalar(slot.type):
            fx.line(f"{place.ref()} = 0")
        else:
            fx.line(f"{place.span()} = {fx.gen.const_obj(template(slot.type))}")

    def _st_ConstDecl(self, fx: FnCtx, s: ir.ConstDecl) -> None:
        fx.scope.bind(s, ConstVal(fx.eg.const_code(s, s), s.type_ref.resolved))

    def _st_InstanceDecl(self, fx: FnCtx, s: ir.InstanceDecl) -> None:
        raise unsupported(s, "instantiation inside a block body")

    # ------------------------------------------------------------------ assignment

    def _st_Assign(self, fx: FnCtx, s: ir.Assign) -> None:
        """The left side is evaluated to a location first, then the right side (P4 spec
        12.1): a run-time stack index is fixed before the right side's side effects run."""
        lhs = s.lhs
        if isinstance(lhs, ir.DontCare):
            fx.eg.ex(s.rhs)
            return
        if isinstance(lhs, ir.PathExpr) and isinstance(fx.scope.get(lhs.decl), PyVar):
            fx.line(f"{fx.scope.get(lhs.decl).name} = {fx.eg.ex(s.rhs)}")
            return
        check_index_order(lhs, s.rhs)
        if isinstance(lhs, ir.Slice):
            base, lo, hi = _flat_slice(lhs)
            target = self._scalar_target(fx, base, pin=True)
            with fx.eg.preset(lhs, f"(({target} >> {lo}) & {hex((1 << (hi - lo + 1)) - 1)})"):
                self._slice_store(fx, target, base.type, lo, hi, fx.eg.ex(s.rhs))
            return
        place = self._pinned(fx, fx.eg.place(lhs))
        current = place.ref() if is_scalar(place.type) else place.span()
        with fx.eg.preset(lhs, current):  # `lhs op= rhs` reads the location it writes
            self._store(fx, place, self._value_for(fx, s.rhs, lhs.type))

    @staticmethod
    def _pinned(fx: FnCtx, place: Place) -> Place:
        """A place whose run-time base is computed now, into a temporary."""
        if place.static is not None:
            return place
        tmp = fx.temp()
        fx.line(f"{tmp} = {place.base}")
        return Place(tmp, None, place.type)

    def assign_code(self, fx: FnCtx, place: Place, rhs: ir.Expr) -> None:
        self._store(fx, place, self._value_for(fx, rhs, place.type))

    def _value_for(self, fx: FnCtx, rhs: ir.Expr, t: P4Type | None) -> str:
        if isinstance(rhs, ir.ListExpr | ir.StructExpr):
            return fx.eg.aggregate(rhs, t)
        return fx.eg.ex(rhs)

    def _store(self, fx: FnCtx, place: Place, value: str) -> None:
        t = place.type
        if is_scalar(t):
            fx.line(f"{place.ref()} = {value}")
        else:
            fx.line(f"{place.span()} = {value}")

    def store_code(self, fx: FnCtx, lhs: ir.Expr, value: str) -> None:
        """Assign already-generated value code to an lvalue expression."""
        if isinstance(lhs, ir.DontCare):
            return
        if isinstance(lhs, ir.Slice):
            self._assign_slice(fx, lhs, value)
            return
        if isinstance(lhs, ir.PathExpr) and isinstance(fx.scope.get(lhs.decl), PyVar):
            fx.line(f"{fx.scope.get(lhs.decl).name} = {value}")
            return
        self._store(fx, fx.eg.place(lhs), value)

    def _assign_slice(self, fx: FnCtx, lhs: ir.Slice, value: str) -> None:
        base, lo, hi = _flat_slice(lhs)
        self._slice_store(fx, self._scalar_target(fx, base), base.type, lo, hi, value)

    @staticmethod
    def _slice_store(fx: FnCtx, target: str, base_t: P4Type | None, lo: int, hi: int,
                     value: str) -> None:
        width = hi - lo + 1
        m = (1 << width) - 1
        full = (1 << base_t.width) - 1 if isinstance(base_t, BitsT) else m
        keep = full ^ (m << lo)
        code = f"({target} & {hex(keep)}) | ((({value}) & {hex(m)}) << {lo})"
        if isinstance(base_t, BitsT) and base_t.signed:
            code = fit(code, base_t)
        fx.line(f"{target} = {code}")

    def _scalar_target(self, fx: FnCtx, e: ir.Expr, pin: bool = False) -> str:
        if isinstance(e, ir.PathExpr) and isinstance(fx.scope.get(e.decl), PyVar):
            return fx.scope.get(e.decl).name
        place = fx.eg.place(e)
        return (self._pinned(fx, place) if pin else place).ref()

    # ------------------------------------------------------------------ switch

    def _st_Switch(self, fx: FnCtx, s: ir.Switch) -> None:
        e = s.expr
        table_b = None
        if isinstance(e, ir.Member) and e.name == "action_run" and isinstance(e.expr, ir.Call):
            target = e.expr.target  # t.apply(): the table's binding
            if isinstance(target, ir.Member) and isinstance(target.expr, ir.PathExpr):
                table_b = fx.scope.get(target.expr.decl)
        value = fx.eg.ex(e)
        tmp = fx.temp()
        fx.line(f"{tmp} = {value}")
        pending: list[str] = []
        first = True
        has_default = False
        for case in s.cases:
            for label in case.labels:
                if isinstance(label, ir.DefaultKey):
                    has_default = True
                    continue
                pending.append(self._label_code(fx, label, table_b))
            if case.body is None:
                continue
            if has_default and not pending:
                fx.line("else:" if not first else "if True:")
            else:
                cond = " or ".join(f"{tmp} == {p}" for p in pending) or "False"
                if has_default:
                    cond = "True"
                fx.line(f"{'if' if first else 'elif'} {cond}:")
            with fx.indent():
                self.block(fx, case.body)
            first = False
            pending = []
            if has_default:
                break

    def _label_code(self, fx: FnCtx, label: ir.Expr, table_b: TableB | None) -> str:
        if table_b is not None:
            name = label.name if isinstance(label, ir.PathExpr) else None
            if name is None or name not in table_b.action_ids:
                raise unsupported(label, "switch label that is not an action of the table")
            return str(table_b.action_ids[name])
        return fx.eg.ex(label)



def _flat_slice(lhs: ir.Slice) -> tuple[ir.Expr, int, int]:
    """x[a:b][c:d] is x[b+c:b+d]: the sliced base and the bit range within it."""
    base, lo, hi = lhs.expr, lhs.lo, lhs.hi
    while isinstance(base, ir.Slice):
        lo, hi = base.lo + lo, base.lo + hi
        base = base.expr
    return base, lo, hi


def check_index_order(lhs: ir.Expr, rhs: ir.Expr) -> None:
    """Reject `s[i].f = g(i)`-like assignments: the spec fixes the location `s[i]` before the
    right side runs, but p4c's BMv2 backend reads a call-free index after the right side's
    calls have copied their results out, so no single order matches both."""
    if not _has_call(rhs, writes_only=True):
        return
    for index in _run_time_indices(lhs):
        if not _has_call(index, writes_only=False):
            raise unsupported(index, "a run-time stack index on the left of an assignment whose "
                              "right side calls something with out/inout arguments (the P4 "
                              "spec and p4c's BMv2 backend evaluate it in different orders; "
                              "copy the index into a local variable first)")


def _run_time_indices(e: ir.Expr) -> list[ir.Expr]:
    out: list[ir.Expr] = []
    while True:
        if isinstance(e, ir.Index):
            if ExprGen.const_int(e.index) is None:
                out.append(e.index)
            e = e.expr
        elif isinstance(e, ir.Member | ir.Slice):
            e = e.expr
        else:
            return out


def _has_call(node: object, writes_only: bool) -> bool:
    """Whether an expression contains a call (with out/inout arguments if writes_only)."""
    if isinstance(node, ir.Call):
        if not writes_only or node.kind in (ir.CallKind.TABLE_APPLY, ir.CallKind.BLOCK_APPLY):
            return True
        params = getattr(node.callee, "params", None) or []
        if any(getattr(p, "direction", "") in ("out", "inout") for p in params):
            return True
    if isinstance(node, ir.Node) and not isinstance(node, ir.Decl):
        for value in vars(node).values():
            items = value if isinstance(value, list) else [value]
            if any(_has_call(v, writes_only) for v in items if isinstance(v, ir.Node)):
                return True
    return False
