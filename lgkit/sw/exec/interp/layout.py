"""Flat slot layout of P4 values: every scalar lives in one slot of the per-packet list S.

bit<W>/int<W>/bool/enum/error: 1 slot. varbit: 2 slots (value, length in bits).
header: [valid, fields...]. header_union: its member headers in order. struct/tuple: fields in
order. header stack: [nextIndex, element 0, element 1, ...].
"""

from __future__ import annotations

from functools import cache

from lgkit.sw.lang.types import (
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


class LayoutError(Exception):
    """A type the interpreter cannot store."""


@cache
def _size_cached(t: P4Type) -> int:
    return _size(t)


def size_of(t: P4Type) -> int:
    """Number of slots a value of type t occupies."""
    try:
        return _size_cached(t)
    except TypeError:  # unhashable type objects
        return _size(t)


def _size(t: P4Type) -> int:
    if isinstance(t, BitsT | BoolT | EnumT | InfIntT):
        return 1
    if isinstance(t, VarbitT):
        return 2
    if isinstance(t, StructLikeT):
        inner = sum(size_of(ft) for _, ft in t.fields)
        return inner + 1 if t.kind == "header" else inner
    if isinstance(t, StackT):
        return 1 + t.size * size_of(t.elem)
    if isinstance(t, TupleT):
        return sum(size_of(e) for e in t.elems)
    raise LayoutError(f"values of type {type(t).__name__} {getattr(t, 'name', '')}")


def field_offset(t: StructLikeT, name: str) -> int:
    """Slot offset of field `name` inside a struct-like value."""
    off = 1 if t.kind == "header" else 0
    for fname, ftype in t.fields:
        if fname == name:
            return off
        off += size_of(ftype)
    raise KeyError(name)


def leaf_types(t: StructLikeT) -> list[P4Type]:
    """A header's field types in slot (and wire) order, structs nested in it flattened."""
    out: list[P4Type] = []
    for _, ft in t.fields:
        if isinstance(ft, StructLikeT) and ft.kind == "struct":
            out.extend(leaf_types(ft))
        else:
            out.append(ft)
    return out


def is_scalar(t: P4Type) -> bool:
    return isinstance(t, BitsT | BoolT | EnumT | InfIntT)


def template(t: P4Type) -> list:
    """The initial slot values of a fresh (invalid / zero) value of type t."""
    return [0] * size_of(t)


def fixed_width(t: StructLikeT) -> int:
    """Bits of a header's fixed-width fields."""
    total = 0
    for ft in leaf_types(t):
        if isinstance(ft, BitsT):
            total += ft.width
        elif isinstance(ft, BoolT):
            total += 1
        elif isinstance(ft, EnumT) and ft.underlying is not None:
            total += ft.underlying.width
    return total


def scalar_width(t: P4Type) -> int:
    if isinstance(t, BitsT):
        return t.width
    if isinstance(t, BoolT):
        return 1
    if isinstance(t, EnumT):
        # plain enums and error are 32-bit values on BMv2 (table keys, action parameters)
        return t.underlying.width if t.underlying is not None else 32
    raise LayoutError(f"type {getattr(t, 'name', type(t).__name__)} has no bit width")
