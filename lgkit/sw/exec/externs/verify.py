"""core.p4's verify(condition, error): a parser error when the condition is false."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lgkit.sw.exec.externs.base import ExternFunction
from lgkit.sw.exec.interp.exprs import unsupported
from lgkit.sw.lang import ir

if TYPE_CHECKING:
    from lgkit.sw.exec.interp.calls import Calls
    from lgkit.sw.exec.interp.fnctx import FnCtx


class Verify(ExternFunction):
    name = "verify"

    def emit(self, calls: Calls, fx: FnCtx, call: ir.Call, args: list[Any]) -> str:
        if fx.kind != "parser":
            raise unsupported(call, "verify outside a parser")
        cond = fx.eg.ex(args[0])
        code = fx.eg.ex(args[1])
        fx.line(f"if not {cond}:")
        with fx.indent():
            fx.line(f"raise _PErr({code})")
        return ""
