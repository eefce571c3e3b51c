"""Name bindings of the code generator: what each declaration compiles to."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lgkit.sw.lang.types import P4Type


@dataclass
class Slot:
    """A variable stored in S[base:base+size]."""

    base: int
    type: P4Type


@dataclass
class RefSlot(Slot):
    """A parameter of a sub-control/parser bound by reference to its caller's storage (every
    apply site passes the same variable, so copy-in/copy-out would change nothing)."""


@dataclass
class PyVar:
    """A scalar held in a Python local of the generated function (in/directionless params)."""

    name: str
    type: P4Type


@dataclass
class ConstVal:
    """A compile-time constant (Python literal code)."""

    code: str
    type: P4Type | None


@dataclass
class ExternB:
    """An extern instance: `var` names the runtime object in the generated module."""

    var: str
    kind: str
    qname: str
    obj: Any
    type: Any = None  # its ExternType (exec/externs/base.py); None: a value set
    impls: dict[str, Any] = field(default_factory=dict)  # abstract method -> its FuncB


@dataclass
class PacketB:
    """The packet_in / packet_out parameter of a parser or deparser."""

    kind: str


@dataclass
class ActionB:
    fn: str
    qname: str
    action_id: int
    decl: Any
    param_slots: dict[str, Any] = field(default_factory=dict)


@dataclass
class FuncB:
    fn: str
    decl: Any
    param_slots: dict[str, Any] = field(default_factory=dict)


@dataclass
class TableB:
    fn: str
    qname: str
    decl: Any
    action_ids: dict[str, int] = field(default_factory=dict)


@dataclass
class InstanceB:
    """A parser/control instance applied from another block: its function and param slots."""

    fn: str
    decl: Any
    params: list[Any]


class Scope:
    """Declarations (by identity) to bindings, with a parent scope."""

    def __init__(self, parent: Scope | None = None, prefix: str = ""):
        self.parent = parent
        self.prefix = prefix
        self._map: dict[int, Any] = {}
        self._keep: list[Any] = []

    def bind(self, decl: Any, binding: Any) -> None:
        self._map[id(decl)] = binding
        self._keep.append(decl)

    def get(self, decl: Any) -> Any:
        scope: Scope | None = self
        while scope is not None:
            found = scope._map.get(id(decl))
            if found is not None:
                return found
            scope = scope.parent
        return None
