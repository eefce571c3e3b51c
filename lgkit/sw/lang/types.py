"""P4 types as the checker computes them and the interpreter consumes them."""

from __future__ import annotations

from dataclasses import dataclass, field

MAX_WIDTH = 2048  # the widest bit<W>, int<W>, varbit<W> and width-prefixed literal, as p4c


class P4Type:
    """Base of every P4 type."""


@dataclass(frozen=True)
class BitsT(P4Type):
    """bit<W> (signed=False) or int<W> (signed=True)."""

    width: int
    signed: bool = False


@dataclass(frozen=True)
class InfIntT(P4Type):
    """The arbitrary-precision type `int` of untyped integer literals and constants."""


@dataclass(frozen=True)
class VarbitT(P4Type):
    """varbit<W>: a bit string of up to max_width bits."""

    max_width: int


@dataclass(frozen=True)
class BoolT(P4Type):
    """bool."""


@dataclass(frozen=True)
class StringT(P4Type):
    """String literals (log_msg)."""


@dataclass(frozen=True)
class VoidT(P4Type):
    """The return type of methods and functions that return nothing."""


@dataclass(frozen=True)
class DontCareT(P4Type):
    """The type of `_`."""


@dataclass(eq=False)
class EnumT(P4Type):
    """enum, serializable enum (underlying set), `error` and `match_kind`.

    For a serializable enum, `values` maps each member to its integer value; for a plain
    enum, `error` and `match_kind`, values are the member's position (used only inside the
    target).
    """

    name: str
    members: list[str]
    underlying: BitsT | None = None
    values: dict[str, int] = field(default_factory=dict)


@dataclass(eq=False)
class StructLikeT(P4Type):
    """header, header_union or struct. `kind` is 'header', 'header_union' or 'struct'."""

    kind: str
    name: str
    fields: list[tuple[str, P4Type]]
    annotations: dict[str, list[str]] = field(default_factory=dict)
    field_annotations: dict[str, dict[str, list[str]]] = field(default_factory=dict)

    def field_type(self, name: str) -> P4Type | None:
        for fname, ftype in self.fields:
            if fname == name:
                return ftype
        return None

    def bit_width(self) -> int:
        """Fixed width in bits of a header's non-varbit fields."""
        return sum(t.width for _, t in self.fields if isinstance(t, BitsT))


@dataclass(frozen=True)
class StackT(P4Type):
    """A header stack H[size]."""

    elem: P4Type
    size: int


@dataclass(frozen=True)
class TupleT(P4Type):
    """tuple<...> and the type of list expressions `{a, b}`."""

    elems: tuple[P4Type, ...]


@dataclass(frozen=True)
class TypeVarT(P4Type):
    """A generic type parameter (T in register<T>) before specialisation."""

    name: str


@dataclass(eq=False)
class ValueSetT(P4Type):
    """A parser value set `value_set<elem>(size)`: a run-time set of keyset values."""

    elem: P4Type
    size: int


@dataclass(eq=False)
class ExternT(P4Type):
    """An extern object type, specialised with its type arguments."""

    name: str
    type_args: list[P4Type] = field(default_factory=list)


@dataclass(eq=False)
class TableT(P4Type):
    """A table; `apply()` returns its ApplyResultT."""

    name: str


@dataclass(frozen=True)
class ApplyResultT(P4Type):
    """The struct {hit, miss, action_run} returned by table.apply()."""

    table: str


@dataclass(eq=False)
class BlockT(P4Type):
    """A parser, control or package type (kind is 'parser', 'control' or 'package')."""

    kind: str
    name: str


def width_of(t: P4Type) -> int:
    """Width in bits of a fixed-width serializable type; raises on others."""
    if isinstance(t, BitsT):
        return t.width
    if isinstance(t, BoolT):
        return 1
    if isinstance(t, EnumT) and t.underlying is not None:
        return t.underlying.width
    if isinstance(t, StructLikeT):
        return sum(width_of(ft) for _, ft in t.fields)
    raise TypeError(f"type {t} has no fixed width")
