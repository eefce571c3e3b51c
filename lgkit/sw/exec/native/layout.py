"""The native engine's state layout: every scalar of a v1model program in one uint64 slot array."""

from __future__ import annotations

from dataclasses import dataclass, field

from lgkit.sw.exec.interp.layout import scalar_width
from lgkit.sw.lang.types import BitsT, BoolT, EnumT, P4Type, StackT, StructLikeT


class Unsupported(Exception):
    """A construct the native engine does not cover; `what` names it for the one-line notice."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


MAX_WIDTH = 64


def width_of(t: P4Type | None) -> int:
    """Bits of a scalar type the engine holds in one uint64 (Unsupported otherwise); an
    int<W> is held as its W-bit pattern (see is_signed)."""
    if not isinstance(t, BitsT | BoolT | EnumT):
        raise Unsupported(f"values of type {type(t).__name__ if t is not None else 'unknown'}")
    width = scalar_width(t)
    if width > MAX_WIDTH:
        raise Unsupported(f"bit<{width}> wider than {MAX_WIDTH} bits")
    return width


def is_signed(t: P4Type | None) -> bool:
    """int<W>: held as its W-bit two's complement pattern, sign-extended where it matters."""
    return isinstance(t, BitsT) and t.signed


def mask(width: int) -> str:
    """The C constant of a width's mask."""
    return f"0x{(1 << width) - 1:X}ULL"


class Dyn(str):
    """The C text of a slot number computed at run time (a field of a header stack element at a
    run-time index); `slot` is the field's slot in element 0 (its width)."""

    slot: int

    def __new__(cls, text: str, slot: int) -> Dyn:
        made = super().__new__(cls, text)
        made.slot = slot
        return made


Slot = int | Dyn  # a slot number, or its C text when computed at run time


@dataclass
class Node:
    """A struct-like value's slots: `valid` for a header, `fields` by name (a slot number for a
    scalar, a Node for a nested struct or header). A stack element at a run-time index has Dyn
    slots: element 0's plus `base` (C text), `origin` being element 0."""

    type: StructLikeT
    valid: Slot | None
    fields: dict[str, Slot | Node | Stack] = field(default_factory=dict)
    base: str = ""
    origin: Node | None = None

    def header_fields(self) -> list[tuple[Slot, int, int]]:
        """A header's fields as (slot, bit offset, width), in wire order."""
        out: list[tuple[Slot, int, int]] = []
        off = 0
        for name, ft in self.type.fields:
            w = width_of(ft)
            slot = self.fields[name]
            if not isinstance(slot, int | Dyn):
                raise Unsupported(f"header field {name} that is not a scalar")
            out.append((slot, off, w))
            off += w
        return out

    def shifted(self, base: str) -> Node:
        """This header (a stack's element 0) moved by `base` slots, computed at run time."""
        def at(k: int) -> Dyn:
            return Dyn(f"({base} + {k})", k)

        fields: dict[str, Slot | Node | Stack] = {
            name: at(k) for name, k in self.fields.items() if isinstance(k, int)}
        if len(fields) != len(self.fields) or not isinstance(self.valid, int):
            raise Unsupported("a run-time index into a stack of non-headers")
        return Node(self.type, at(self.valid), fields, base, self)

    def slots(self) -> list[Slot]:
        """Every slot of the value, the valid bit first (for copies)."""
        out: list[Slot] = [] if self.valid is None else [self.valid]
        for f in self.fields.values():
            out.extend([f] if isinstance(f, int | Dyn) else f.slots())
        return out


@dataclass
class Stack:
    """A header stack's slots: nextIndex, then its elements one after another (element i's
    slot k is element 0's plus i * stride)."""

    type: StackT
    next_index: int
    elems: list[Node]

    @property
    def stride(self) -> int:
        return len(self.elems[0].slots())

    def evenly_laid_out(self) -> bool:
        """Whether element i's slots are element 0's plus i * stride (run-time indices)."""
        first, last = fixed(self.elems[0].slots())[0], fixed(self.elems[-1].slots())[0]
        return last == first + self.stride * (len(self.elems) - 1)

    def slots(self) -> list[Slot]:
        return [self.next_index] + [k for e in self.elems for k in e.slots()]


def fixed(slots: list[Slot]) -> list[int]:
    """The slots of a declared value (never a stack element at a run-time index)."""
    out = [k for k in slots if isinstance(k, int)]
    assert len(out) == len(slots), "a declared value's slots are numbers"
    return out


class Layout:
    """Slot numbers handed out in order; `widths[k]` is slot k's width."""

    def __init__(self) -> None:
        self.widths: list[int] = []

    def scalar(self, t: P4Type | None) -> int:
        self.widths.append(width_of(t))
        return len(self.widths) - 1

    def value(self, t: P4Type | None) -> int | Node | Stack:
        """Slots for a value of type t: a slot for a scalar, a Node for a struct or header, a
        Stack for a header stack."""
        if isinstance(t, StackT):
            if not (isinstance(t.elem, StructLikeT) and t.elem.kind == "header"):
                raise Unsupported("a stack of header unions")
            next_index = self.scalar(BitsT(32))
            elems = [self.value(t.elem) for _ in range(t.size)]
            return Stack(t, next_index, elems)  # type: ignore[arg-type]
        if not isinstance(t, StructLikeT):
            return self.scalar(t)
        if t.kind not in ("struct", "header"):
            raise Unsupported(f"a {t.kind}")
        valid = self.scalar(BoolT()) if t.kind == "header" else None
        if t.kind == "header" and sum(_bits(ft) for _, ft in t.fields) % 8:
            raise Unsupported(f"header {t.name} that is not whole bytes")
        node = Node(t, valid)
        for name, ft in t.fields:
            if t.kind == "header" and isinstance(ft, StructLikeT | StackT):
                raise Unsupported(f"header {t.name} with a struct field")
            node.fields[name] = self.value(ft)
        return node


def _bits(t: P4Type) -> int:
    return width_of(t)


def header_bytes(node: Node) -> int:
    return sum(_bits(ft) for _, ft in node.type.fields) // 8
