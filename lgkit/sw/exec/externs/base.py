"""What an extern is to the interpreter: a type (instances, methods) or a function, and the
registry an architecture builds from them (by name; the P4 declarations give the type rules)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lgkit.sw.exec.interp.exprs import unsupported
from lgkit.sw.lang import ir

if TYPE_CHECKING:
    from lgkit.sw.exec.interp.calls import Calls
    from lgkit.sw.exec.interp.codegen import CodeGen
    from lgkit.sw.exec.interp.fnctx import FnCtx
    from lgkit.sw.exec.interp.scope import ExternB


class ExternType:
    """An extern object type (`register<T>(size) r;`): its run-time state and its methods."""

    name = ""
    cells_arg: int | None = None  # the constructor argument that is a number of cells to hold

    def make(self, gen: CodeGen, decl: ir.InstanceDecl, qname: str, args: list[Any]) -> Any:
        """The run-time state of an instance (`args`: its constant constructor arguments)."""
        raise unsupported(decl, f"an instance of extern {self.name}")

    def method(self, calls: Calls, fx: FnCtx, call: ir.Call, b: ExternB, name: str,
               args: list[ir.Expr]) -> str:
        """Generate a method call (statements through `fx`; returns the value's code or "")."""
        raise unsupported(call, f"{self.name}.{name}")


class ExternFunction:
    """An extern function (`mark_to_drop(sm)`): its code generation."""

    name = ""

    def emit(self, calls: Calls, fx: FnCtx, call: ir.Call, args: list[Any]) -> str:
        """Generate the call (`args` in parameter order, missing ones their default or None)."""
        raise NotImplementedError


@dataclass(frozen=True)
class Registry:
    """The externs of an architecture, by P4 name."""

    types: dict[str, ExternType]
    functions: dict[str, ExternFunction]

    @classmethod
    def of(cls, *externs: ExternType | ExternFunction) -> Registry:
        types = {x.name: x for x in externs if isinstance(x, ExternType)}
        functions = {x.name: x for x in externs if isinstance(x, ExternFunction)}
        assert len(types) + len(functions) == len(externs), "an extern registered twice"
        return cls(types, functions)

    def type_of(self, decl: ir.InstanceDecl, name: str) -> ExternType:
        try:
            return self.types[name]
        except KeyError:
            raise unsupported(decl, f"extern {name}") from None

    def function(self, call: ir.Call, name: str) -> ExternFunction:
        try:
            return self.functions[name]
        except KeyError:
            raise unsupported(call, f"extern function '{name}'") from None
