"""Expression code generation: a checked ir.Expr -> Python source text over the slot list S."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lgkit.sw.exec.interp.layout import field_offset, size_of
from lgkit.sw.exec.interp.scope import ConstVal, PyVar, Slot
from lgkit.sw.lang import ir
from lgkit.sw.lang.frontend.diagnostics import P4Error, error_at
from lgkit.sw.lang.types import (
    ApplyResultT,
    BitsT,
    BoolT,
    EnumT,
    InfIntT,
    P4Type,
    StackT,
    StructLikeT,
    TupleT,
    VarbitT,
)

if TYPE_CHECKING:
    from lgkit.sw.exec.interp.fnctx import FnCtx


def unsupported(node: ir.Node, what: str) -> P4Error:
    return error_at(node.loc, f"unsupported: {what}")


def enum_value(t: EnumT, member: str) -> int:
    if member in t.values:
        return t.values[member]
    return t.members.index(member)


def wrap(value: int, t: P4Type | None) -> int:
    """An integer converted to the representation of t (unsigned, or signed for int<W>)."""
    if isinstance(t, BitsT):
        value &= (1 << t.width) - 1
        if t.signed and value >> (t.width - 1):
            value -= 1 << t.width
    return value


@dataclass
class Place:
    """Where a struct-like or scalar value lives: S[base + offset]; `base` is Python code,
    `static` the base as an int when known at compile time."""

    base: str
    static: int | None
    type: P4Type

    def at(self, off: int) -> str:
        if self.static is not None:
            return str(self.static + off)
        return f"{self.base} + {off}" if off else self.base

    def sub(self, off: int, t: P4Type) -> Place:
        if self.static is not None:
            return Place(str(self.static + off), self.static + off, t)
        return Place(f"({self.base} + {off})" if off else self.base, None, t)

    def ref(self, off: int = 0) -> str:
        return f"S[{self.at(off)}]"

    def span(self) -> str:
        n = size_of(self.type)
        if self.static is not None:
            return f"S[{self.static}:{self.static + n}]"
        return f"S[{self.base}:{self.base} + {n}]"


def _mask(w: int) -> str:
    return hex((1 << w) - 1)


def signed_wrap(code: str, w: int) -> str:
    half = 1 << (w - 1)
    return f"((({code}) + {hex(half)}) & {_mask(w)}) - {hex(half)}"


def fit(code: str, t: P4Type | None) -> str:
    """Wrap an unbounded integer expression into type t."""
    if isinstance(t, BitsT):
        if t.signed:
            return "(" + signed_wrap(code, t.width) + ")"
        return f"(({code}) & {_mask(t.width)})"
    return code


class ExprGen:
    """Compiles expressions for one generated function (FnCtx provides scope, temps, lines)."""

    def __init__(self, fx: FnCtx):
        self.fx = fx
        self.lazy = 0  # > 0 while generating an operand that may not be evaluated
        self.presets: dict[int, str] = {}  # id(expr) -> code already computed for it

    # ------------------------------------------------------------------ places

    def place(self, e: ir.Expr) -> Place:
        fx = self.fx
        if isinstance(e, ir.PathExpr):
            b = fx.scope.get(e.decl)
            if isinstance(b, Slot):
                return Place(str(b.base), b.base, b.type)
            raise unsupported(e, f"'{e.name}' as a storage location")
        if isinstance(e, ir.Member):
            inner_t = e.expr.type
            if isinstance(inner_t, StackT):
                return self._stack_member(e, inner_t)
            if isinstance(inner_t, StructLikeT):
                p = self.place(e.expr)
                return p.sub(field_offset(inner_t, e.name), ir.checked(e.type))
            raise unsupported(e, f"member '{e.name}' as a storage location")
        if isinstance(e, ir.Index):
            st = e.expr.type
            if not isinstance(st, StackT):
                raise unsupported(e, "indexing a non-stack value")
            p = self.place(e.expr)
            stride = size_of(st.elem)
            idx = self.const_int(e.index)
            if idx is not None:
                if not 0 <= idx < st.size:
                    raise error_at(e.loc, f"stack index {idx} out of bounds (size {st.size})")
                return p.sub(1 + idx * stride, st.elem)
            code = f"_si({self.ex(e.index)}, {st.size})"
            return self._dyn(p, code, stride, st.elem)
        if isinstance(e, ir.Cast) and e.expr.type is e.type:
            return self.place(e.expr)
        raise unsupported(e, f"{type(e).__name__} as a storage location")

    def _dyn(self, p: Place, idx_code: str, stride: int, t: P4Type) -> Place:
        """A stack element at a run-time index; computed inside the expression (lazily, so
        short-circuit operators never evaluate an out-of-range index they skip)."""
        return Place(f"({p.at(1)} + {stride} * {idx_code})", None, t)

    def _stack_member(self, e: ir.Member, st: StackT) -> Place:
        p = self.place(e.expr)
        stride = size_of(st.elem)
        if e.name == "next":
            return self._dyn(p, f"_si({p.ref()}, {st.size})", stride, st.elem)
        if e.name == "last":
            return self._dyn(p, f"_si({p.ref()} - 1, {st.size})", stride, st.elem)
        raise unsupported(e, f"stack member '{e.name}' as a storage location")

    def is_place(self, e: ir.Expr) -> bool:
        if isinstance(e, ir.PathExpr):
            return isinstance(self.fx.scope.get(e.decl), Slot)
        if isinstance(e, ir.Member):
            if isinstance(e.expr.type, StackT):
                return e.name in ("next", "last") and self.is_place(e.expr)
            return isinstance(e.expr.type, StructLikeT) and self.is_place(e.expr)
        if isinstance(e, ir.Index):
            return self.is_place(e.expr)
        return False

    @staticmethod
    def const_int(e: ir.Expr) -> int | None:
        """The value of a compile-time integer expression (literal, cast, constant), or None."""
        if isinstance(e, ir.IntLit):
            return e.value
        if isinstance(e, ir.Cast) and isinstance(e.type, BitsT | InfIntT):
            if not isinstance(e.expr.type, BitsT | InfIntT):
                return None
            inner = ExprGen.const_int(e.expr)
            return None if inner is None else wrap(inner, e.type)
        if isinstance(e, ir.PathExpr) and isinstance(e.decl, ir.ConstDecl):
            if isinstance(e.decl.value, int) and not isinstance(e.decl.value, bool):
                return e.decl.value
        return None

    # ------------------------------------------------------------------ values

    def ex(self, e: ir.Expr) -> str:
        """Python code for the value of e: a scalar, or a list of slot values for aggregates.
        Code nested too deeply for Python's parser is computed into a temporary first, where
        that cannot change what runs (not inside the lazy operands of ?:, && and ||)."""
        if id(e) in self.presets:
            return self.presets[id(e)]
        t = e.type
        if not self._is_scalar_type(t) and self.is_place(e):
            return self.place(e).span()
        method = getattr(self, "_ex_" + type(e).__name__, None)
        if method is None:
            raise unsupported(e, f"expression {type(e).__name__}")
        code = method(e)
        if not self.lazy and _paren_depth(code) > MAX_CODE_PARENS:
            tmp = self.fx.temp()
            self.fx.line(f"{tmp} = {code}")
            return tmp
        return code

    @contextmanager
    def preset(self, e: ir.Expr, code: str) -> Iterator[None]:
        """While active, the value of e is `code` (an evaluated location, not e again)."""
        self.presets[id(e)] = code
        try:
            yield
        finally:
            del self.presets[id(e)]

    def lazily(self, e: ir.Expr) -> str:
        """Code for an operand that may not run (a branch of ?:, the right of && and ||)."""
        self.lazy += 1
        try:
            return self.ex(e)
        finally:
            self.lazy -= 1

    @staticmethod
    def _is_scalar_type(t: P4Type | None) -> bool:
        return isinstance(t, BitsT | BoolT | EnumT | InfIntT)

    def _ex_IntLit(self, e: ir.IntLit) -> str:
        t = e.type
        if e.width is not None and not isinstance(t, BitsT):
            t = BitsT(e.width, e.signed)
        return str(wrap(e.value, t))

    def _ex_BoolLit(self, e: ir.BoolLit) -> str:
        return "True" if e.value else "False"

    def _ex_StringLit(self, e: ir.StringLit) -> str:
        return repr(e.value)

    def _ex_PathExpr(self, e: ir.PathExpr) -> str:
        b = self.fx.scope.get(e.decl)
        if isinstance(b, Slot):
            return f"S[{b.base}]"
        if isinstance(b, PyVar):
            return b.name
        if isinstance(b, ConstVal):
            return b.code
        if isinstance(e.decl, ir.ConstDecl):
            return self.const_code(e.decl, e)
        raise unsupported(e, f"the value of '{e.name}'")

    def const_code(self, decl: ir.ConstDecl, at: ir.Node) -> str:
        value = decl.value
        t = decl.type_ref.resolved if decl.type_ref is not None else None
        if isinstance(value, bool):
            return "True" if value else "False"
        if isinstance(value, int):
            return str(wrap(value, t))
        if isinstance(value, str) and isinstance(t, EnumT):
            return str(enum_value(t, value))
        if value is None:
            return self.ex(decl.init)
        raise unsupported(at, f"constant '{decl.name}' of this type")

    def _ex_TypeMember(self, e: ir.TypeMember) -> str:
        t = e.type
        if isinstance(t, EnumT):
            return str(enum_value(t, e.member))
        raise unsupported(e, f"type member {e.type_name}.{e.member}")

    def _ex_Member(self, e: ir.Member) -> str:
        inner_t = e.expr.type
        if isinstance(inner_t, StackT):
            p = self.place(e.expr)
            if e.name == "size":
                return str(inner_t.size)
            if e.name == "lastIndex":
                return f"(({p.ref()} - 1) & 0xffffffff)"
            if e.name in ("next", "last"):
                return self.place(e).span()
            raise unsupported(e, f"stack member '{e.name}'")
        if isinstance(inner_t, ApplyResultT) or (
            isinstance(e.expr, ir.Call) and e.expr.kind == ir.CallKind.TABLE_APPLY
        ):
            call = self.ex(e.expr)
            if e.name == "hit":
                return f"{call}.hit"
            if e.name == "miss":
                return f"(not {call}.hit)"
            if e.name == "action_run":
                return f"{call}.action_id"
            raise unsupported(e, f"apply result member '{e.name}'")
        if isinstance(inner_t, StructLikeT):
            if self.is_place(e.expr):
                p = self.place(e)
                if isinstance(e.type, VarbitT):
                    return p.span()
                if self._is_scalar_type(e.type):
                    return p.ref()
                return p.span()
            # member of an rvalue aggregate: index into its flat list
            off = field_offset(inner_t, e.name)
            n = size_of(ir.checked(e.type))
            agg = self.ex(e.expr)
            if self._is_scalar_type(e.type):
                return f"({agg})[{off}]"
            return f"({agg})[{off}:{off + n}]"
        raise unsupported(e, f"member '{e.name}' of {type(inner_t).__name__}")

    def _ex_Index(self, e: ir.Index) -> str:
        return self.place(e).span()

    def _ex_Slice(self, e: ir.Slice) -> str:
        width = e.hi - e.lo + 1
        inner = self.ex(e.expr)
        if e.lo:
            return f"(({inner} >> {e.lo}) & {_mask(width)})"
        return f"({inner} & {_mask(width)})"

    def _ex_Unary(self, e: ir.Unary) -> str:
        inner = self.ex(e.expr)
        t = e.type
        if e.op == "!":
            return f"(not {inner})"
        if e.op == "~":
            if isinstance(t, BitsT) and not t.signed:
                return f"({inner} ^ {_mask(t.width)})"
            return f"(~{inner})"
        if e.op == "-":
            return fit(f"-{inner}", t)
        raise unsupported(e, f"unary operator {e.op}")

    def _ex_Binary(self, e: ir.Binary) -> str:
        op = e.op
        if op in ("&&", "||"):
            return self._logical(e)
        if op in ("==", "!="):
            return self._equality(e)
        a, b = self._operands(e.left, e.right)
        t = e.type
        if op in ("<", "<=", ">", ">="):
            return f"({a} {op} {b})"
        if op == "++":
            return self._concat(e, a, b)
        if op in ("&", "|", "^"):
            return f"({a} {op} {b})"
        if op == "<<":
            return self._shl(e, a, b)
        if op == ">>":
            return self._shr(e, a, b)
        if op in ("+", "-", "*"):
            return fit(f"{a} {op} {b}", t)
        if op in ("/", "%"):
            helper = "_div" if op == "/" else "_mod"
            return f"{helper}({a}, {b})"
        if op in ("|+|", "|-|"):
            return self._saturate(e, a, b)
        raise unsupported(e, f"operator {op}")

    def captured(self, e: ir.Expr, lazy: bool = False) -> tuple[str, list[str]]:
        """Code for e and the statement lines its evaluation needs (calls with copy-in/out),
        taken out of the function so the caller decides where they run."""
        lines = self.fx.lines
        mark = len(lines)
        code = self.lazily(e) if lazy else self.ex(e)
        body = lines[mark:]
        del lines[mark:]
        return code, body

    def _operands(self, left: ir.Expr, right: ir.Expr) -> tuple[str, str]:
        """Both operands, left evaluated before any side effect of the right one."""
        a, b = self.in_order([left, right])
        return a, b

    def in_order(self, items: list[ir.Expr], value: Callable[[ir.Expr], str] | None = None
                 ) -> list[str]:
        """Code for each item, evaluated left to right as P4 requires: before an item whose
        evaluation has side effects (calls with copy-out) runs, the values of the items before
        it are saved in temporaries, so they are read before those side effects."""
        value = value or self.ex
        codes: list[str] = []
        for item in items:
            lines = self.fx.lines
            mark = len(lines)
            code = value(item)
            body = lines[mark:]
            del lines[mark:]
            if body:
                for i, prev in enumerate(codes):
                    if not _is_constant_code(prev):
                        star = "*" if prev.startswith("*") else ""  # a spliced aggregate part
                        tmp = self.fx.temp()
                        self.fx.line(f"{tmp} = {prev[len(star):]}")
                        codes[i] = star + tmp
                lines.extend(body)
            codes.append(code)
        return codes

    def _logical(self, e: ir.Binary) -> str:
        """&& and ||: the right operand (and its side effects) runs only when the left one does
        not decide the result."""
        py = "and" if e.op == "&&" else "or"
        a = self.ex(e.left)
        b, body = self.captured(e.right, lazy=True)
        if not body:
            return f"({a} {py} {b})"
        fx = self.fx
        t = fx.temp()
        fx.line(f"{t} = {a}")
        fx.line(f"if {t}:" if e.op == "&&" else f"if not {t}:")
        fx.lines.extend("    " + line for line in body)
        fx.line(f"    {t} = {b}")
        return t

    def _equality(self, e: ir.Binary) -> str:
        lt = e.left.type
        neg = e.op == "!="
        if self._is_scalar_type(lt) or lt is None:
            a, b = self._operands(e.left, e.right)
            return f"({a} {e.op} {b})"
        a, b = self._operands(e.left, e.right)
        if isinstance(lt, StructLikeT | StackT | TupleT | VarbitT):
            code = f"_agg_eq({a}, {b}, {self.fx.gen.const_obj(_valid_offsets(lt))})"
            return f"(not {code})" if neg else code
        raise unsupported(e, "comparing values of this type")

    def _concat(self, e: ir.Binary, a: str, b: str) -> str:
        lt, rt, t = e.left.type, e.right.type, e.type
        if not (isinstance(lt, BitsT) and isinstance(rt, BitsT)):
            raise unsupported(e, "++ on non-bit operands")
        if lt.signed:
            a = f"({a} & {_mask(lt.width)})"
        if rt.signed:
            b = f"({b} & {_mask(rt.width)})"
        code = f"(({a} << {rt.width}) | {b})"
        if isinstance(t, BitsT) and t.signed:
            return "(" + signed_wrap(code, t.width) + ")"
        return code

    def _shl(self, e: ir.Binary, a: str, b: str) -> str:
        t = e.type
        if not isinstance(t, BitsT):
            return f"({a} << {b})"
        amount = self.const_int(e.right)
        if amount is not None:
            if amount >= t.width:
                return "0"
            return fit(f"{a} << {amount}", t)
        if t.signed:
            return "(" + signed_wrap(f"_shl({a}, {b}, -1, {t.width})", t.width) + ")"
        return f"_shl({a}, {b}, {_mask(t.width)}, {t.width})"

    def _shr(self, e: ir.Binary, a: str, b: str) -> str:
        t = e.type
        amount = self.const_int(e.right)
        if isinstance(t, BitsT) and amount is not None and amount >= t.width:
            return "(-1 if " + a + " < 0 else 0)" if t.signed else "0"
        if isinstance(t, BitsT) and amount is None:
            # Python shifts by huge amounts are fine for >>, but cap to avoid big ints
            return f"({a} >> min({b}, {t.width}))"
        return f"({a} >> {b})"

    def _saturate(self, e: ir.Binary, a: str, b: str) -> str:
        t = e.type
        if not isinstance(t, BitsT):
            raise unsupported(e, "saturating arithmetic on this type")
        pyop = "+" if e.op == "|+|" else "-"
        if t.signed:
            lo, hi = -(1 << (t.width - 1)), (1 << (t.width - 1)) - 1
        else:
            lo, hi = 0, (1 << t.width) - 1
        return f"min(max({a} {pyop} {b}, {lo}), {hi})"

    def _ex_Ternary(self, e: ir.Ternary) -> str:
        c = self.ex(e.cond)
        a, a_body = self.captured(e.then, lazy=True)
        b, b_body = self.captured(e.other, lazy=True)
        if not a_body and not b_body:
            return f"({a} if {c} else {b})"
        fx = self.fx
        t = fx.temp()
        fx.line(f"if {c}:")
        fx.lines.extend("    " + line for line in a_body)
        fx.line(f"    {t} = {a}")
        fx.line("else:")
        fx.lines.extend("    " + line for line in b_body)
        fx.line(f"    {t} = {b}")
        return t

    def _ex_Cast(self, e: ir.Cast) -> str:
        to, frm = e.type, e.expr.type
        folded = self.const_int(e)
        if folded is not None:
            return str(folded)
        if isinstance(e.expr, ir.ListExpr | ir.StructExpr):
            return self.aggregate(e.expr, to)
        inner = self.ex(e.expr)
        if isinstance(to, BitsT):
            if isinstance(frm, BoolT):
                return f"int({inner})"
            if isinstance(frm, BitsT) and frm.signed == to.signed and frm.width <= to.width:
                return inner
            return fit(inner, to)
        if isinstance(to, BoolT):
            if isinstance(frm, BoolT):
                return inner
            return f"({inner} != 0)"
        if isinstance(to, InfIntT):
            return inner
        if isinstance(to, EnumT):
            if isinstance(frm, BitsT) and to.underlying is not None:
                return fit(inner, to.underlying)
            return inner
        if isinstance(to, StructLikeT | TupleT | StackT | VarbitT) and frm == to:
            return inner
        if isinstance(to, StructLikeT) and isinstance(frm, StructLikeT):
            return inner
        raise unsupported(e, f"cast to {type(to).__name__}")

    def _ex_ListExpr(self, e: ir.ListExpr) -> str:
        return self.aggregate(e, e.type)

    def _ex_StructExpr(self, e: ir.StructExpr) -> str:
        return self.aggregate(e, e.type)

    def aggregate(self, e: ir.Expr, target: P4Type | None) -> str:
        """A list/struct initialiser as a flat slot list in the layout of `target`."""
        if isinstance(target, StructLikeT):
            if isinstance(e, ir.StructExpr):
                given = dict(e.items)
                items = [given.get(name) for name, _ in target.fields]
            elif isinstance(e, ir.ListExpr):
                items = list(e.items)
            else:
                return self.ex(e)
            for item, (fname, _) in zip(items, target.fields, strict=False):
                if item is None:
                    raise unsupported(e, f"initialiser without field '{fname}'")
            types = dict(zip(map(id, items), (t for _, t in target.fields), strict=False))
            given_items = [i for i in items if i is not None]  # all of them (checked above)
            parts = self.in_order(given_items, lambda i: self._part(i, types[id(i)]))
            return "[" + ", ".join((["1"] if target.kind == "header" else []) + parts) + "]"
        if isinstance(target, TupleT) and isinstance(e, ir.ListExpr):
            types = dict(zip(map(id, e.items), target.elems, strict=False))
            parts = self.in_order(e.items, lambda i: self._part(i, types.get(id(i), i.type)))
            return "[" + ", ".join(parts) + "]"
        if isinstance(e, ir.ListExpr):
            return "[" + ", ".join(self.in_order(e.items, lambda i: self._part(i, i.type))) + "]"
        raise unsupported(e, "this initialiser")

    def _part(self, item: ir.Expr, t: P4Type | None) -> str:
        if self._is_scalar_type(t):
            return self.ex(item)
        if isinstance(item, ir.ListExpr | ir.StructExpr):
            return "*" + self.aggregate(item, t)
        return "*" + self.ex(item)

    def _ex_Call(self, e: ir.Call) -> str:
        return self.fx.gen.calls.call_expr(self.fx, e)

    def _ex_DontCare(self, e: ir.DontCare) -> str:
        return "0"


MAX_CODE_PARENS = 40  # deeper eager code goes into a temporary (Python allows 200)


def _paren_depth(code: str) -> int:
    depth = deepest = 0
    for ch in code:
        if ch in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in ")]}":
            depth -= 1
    return deepest


def _is_constant_code(code: str) -> bool:
    """Whether generated value code is a literal (nothing to read before a side effect)."""
    return code.lstrip("-").isdigit() or code in ("True", "False")


def _valid_offsets(t: P4Type) -> tuple[tuple[int, int], ...]:
    """(valid slot, header size) of every header inside t, and (nextIndex slot, 1) of every
    stack: the parts header-aware equality must not compare when unset."""
    out: list[tuple[int, int]] = []

    def walk(tt: P4Type, base: int) -> None:
        if isinstance(tt, StructLikeT):
            if tt.kind == "header":
                out.append((base, size_of(tt)))
                return
            off = base
            for _, ft in tt.fields:
                walk(ft, off)
                off += size_of(ft)
        elif isinstance(tt, StackT):
            out.append((-base - 1, 1))  # nextIndex is not part of a stack's value
            stride = size_of(tt.elem)
            for i in range(tt.size):
                walk(tt.elem, base + 1 + i * stride)

    walk(t, 0)
    return tuple(out)


def agg_eq(a: list, b: list, parts: tuple[tuple[int, int], ...]) -> bool:
    """Equality of two aggregates: headers are equal if both invalid or both valid and equal;
    stacks compare their elements only."""
    a, b = list(a), list(b)
    for pos, n in parts:
        if pos < 0:
            a[-pos - 1] = b[-pos - 1] = 0
        elif not a[pos] and not b[pos]:
            a[pos : pos + n] = [0] * n
            b[pos : pos + n] = [0] * n
    return a == b
