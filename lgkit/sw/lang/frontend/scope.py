"""Scopes of names, and the exceptions and context the checker passes around."""

from __future__ import annotations

from typing import Any

from lgkit.sw.lang import ir
from lgkit.sw.lang import types as t


class CheckError(Exception):
    """One located error; aborts checking of the enclosing declaration."""

    def __init__(self, loc: ir.Loc, message: str) -> None:
        super().__init__(message)
        self.loc, self.message = loc, message


class Silent(Exception):
    """A use of a declaration that already failed: abort without a second message."""


class Overloads(list[ir.ExternDecl]):
    """Extern functions (or methods) sharing a name, told apart by their argument counts."""


class Scope:
    """One level of names (top level, a block's params and locals, a nested block)."""

    def __init__(self, parent: Scope | None = None) -> None:
        self.parent = parent
        self.names: dict[str, Any] = {}

    def lookup(self, name: str) -> Any:
        scope: Scope | None = self
        while scope is not None:
            found = scope.names.get(name)
            if found is not None:
                return found
            scope = scope.parent
        return None

    def declare(self, name: str, decl: Any, loc: ir.Loc) -> None:
        previous = self.names.get(name)
        if previous is None:
            self.names[name] = decl
        elif is_extern_function(previous) and is_extern_function(decl):
            overloads = previous if isinstance(previous, Overloads) else Overloads([previous])
            overloads.append(decl)
            self.names[name] = overloads
        else:
            where = getattr(previous, "loc", None)
            suffix = f" (previous declaration at {where})" if where else ""
            raise CheckError(loc, f"duplicate declaration of '{name}'{suffix}")


def is_extern_function(decl: Any) -> bool:
    if isinstance(decl, Overloads):
        return True
    return isinstance(decl, ir.ExternDecl) and decl.function is not None


def typevar_scope(parent: Scope, names: list[str]) -> Scope:
    scope = Scope(parent)
    for name in names:
        scope.names[name] = t.TypeVarT(name)
    return scope


class Context:
    """What the statement being checked sits in."""

    def __init__(self, kind: str, ret: t.P4Type | None = None, states: set[str] | None = None):
        self.kind = kind  # 'control', 'parser', 'action', 'function', 'top'
        self.ret = ret
        self.states = states or set()
