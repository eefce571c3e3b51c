"""Folding compile-time constant expressions of checked ir (widths, sizes, const values)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lgkit.sw.lang import ir
from lgkit.sw.lang import types as t


def wrap(value: int, typ: t.P4Type | None) -> int:
    """value reduced to the range of a bit<W>/int<W> type (unchanged for other types)."""
    if not isinstance(typ, t.BitsT):
        return value
    if typ.width == 0:
        return 0
    value &= (1 << typ.width) - 1
    if typ.signed and value >> (typ.width - 1):
        value -= 1 << typ.width
    return value


def const_value(e: ir.Expr) -> Any:
    """The value of a checked constant expression (int, bool or enum member name), else None."""
    if isinstance(e, ir.IntLit):
        return wrap(e.value, e.type) if e.width is not None else e.value
    if isinstance(e, ir.BoolLit):
        return e.value
    if isinstance(e, ir.PathExpr):
        return e.decl.value if isinstance(e.decl, ir.ConstDecl) else None
    if isinstance(e, ir.TypeMember):
        return e.member
    if isinstance(e, ir.Cast):
        return _cast(const_value(e.expr), e.expr.type, e.type)
    if isinstance(e, ir.Unary):
        return _unary(e.op, const_value(e.expr), e.type)
    if isinstance(e, ir.Binary):
        left, right = const_value(e.left), const_value(e.right)
        if left is None or right is None:
            return None
        return _binary(e, left, right)
    if isinstance(e, ir.Slice):
        value = const_value(e.expr)
        if not isinstance(value, int) or isinstance(value, bool):
            return None
        return (value >> e.lo) & ((1 << (e.hi - e.lo + 1)) - 1)
    if isinstance(e, ir.Ternary):
        cond = const_value(e.cond)
        if cond is None:
            return None
        return const_value(e.then if cond else e.other)
    return None


def _cast(value: Any, have: t.P4Type | None, to: t.P4Type | None) -> Any:
    if value is None:
        return None
    if isinstance(value, str):
        if isinstance(have, t.EnumT) and isinstance(to, t.BitsT) and value in have.values:
            return wrap(have.values[value], to)
        return value if isinstance(to, t.EnumT) else None
    if isinstance(to, t.BoolT):
        return bool(value)
    if isinstance(to, t.EnumT):
        return next((m for m, v in to.values.items() if v == value), None)
    if isinstance(to, t.BitsT):
        return wrap(int(value), to)
    return value


def _unary(op: str, value: Any, typ: t.P4Type | None) -> Any:
    if value is None or isinstance(value, str):
        return None
    if op == "!":
        return not value
    if op == "-":
        return wrap(-value, typ)
    if op == "~":
        return wrap(~value, typ)
    return None


def _saturate(value: int, typ: t.P4Type | None) -> int:
    if not isinstance(typ, t.BitsT):
        return value
    lo = -(1 << (typ.width - 1)) if typ.signed else 0
    hi = (1 << (typ.width - 1)) - 1 if typ.signed else (1 << typ.width) - 1
    return max(lo, min(hi, value))


def _binary(e: ir.Binary, left: Any, right: Any) -> Any:
    op, typ = e.op, e.type
    if op in ("==", "!="):
        return (left == right) == (op == "==")
    if isinstance(left, str) or isinstance(right, str):
        return None
    if op == "&&":
        return left and right
    if op == "||":
        return left or right
    compare = {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}
    if op in compare:
        return compare[op]
    if op in ("/", "%") and right == 0:
        return None
    if op == "++":
        assert isinstance(e.right.type, t.BitsT)
        width = e.right.type.width
        return wrap((left << width) | (right & ((1 << width) - 1)), typ)
    arithmetic: dict[str, Callable[[], int]] = {
        "+": lambda: left + right,
        "-": lambda: left - right,
        "*": lambda: left * right,
        "/": lambda: left // right,
        "%": lambda: left % right,
        "&": lambda: left & right,
        "|": lambda: left | right,
        "^": lambda: left ^ right,
        "<<": lambda: left << right,
        ">>": lambda: left >> right,
        "|+|": lambda: _saturate(left + right, typ),
        "|-|": lambda: _saturate(left - right, typ),
    }
    if op not in arithmetic or (op in ("<<", ">>") and right > 4096):
        return None
    return wrap(arithmetic[op](), typ)
