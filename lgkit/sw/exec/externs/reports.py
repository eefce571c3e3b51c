"""What a program reports outside the packet: digest (to the control plane), log_msg, and
assert/assume (a failed one is a log entry, as BMv2 logs it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lgkit.sw.exec.externs.base import ExternFunction
from lgkit.sw.exec.interp.exprs import unsupported
from lgkit.sw.exec.interp.layout import is_scalar
from lgkit.sw.lang import ir
from lgkit.sw.lang.types import StructLikeT

if TYPE_CHECKING:
    from lgkit.sw.exec.interp.calls import Calls
    from lgkit.sw.exec.interp.fnctx import FnCtx


class Digest(ExternFunction):
    name = "digest"

    def emit(self, calls: Calls, fx: FnCtx, call: ir.Call, args: list[Any],
             name: str | None = None) -> str:
        """P.digest = (name: the data's type name unless given, the field values)."""
        data = args[1]
        t = data.type
        if name is None:
            name = t.name if isinstance(t, StructLikeT) else "digest"
        values = fx.eg.ex(data) if not is_scalar(t) else f"[{fx.eg.ex(data)}]"
        if isinstance(data, ir.ListExpr | ir.StructExpr):
            values = fx.eg.aggregate(data, t)
        return f"P.digest = ({name!r}, tuple({values}))"


class LogMsg(ExternFunction):
    name = "log_msg"

    def emit(self, calls: Calls, fx: FnCtx, call: ir.Call, args: list[Any]) -> str:
        msg = args[0]
        if not isinstance(msg, ir.StringLit):
            raise unsupported(call, "log_msg with a non-literal message")
        values = "[]"
        if len(args) > 1 and args[1] is not None and not isinstance(args[1], ir.DontCare):
            data = args[1]
            if isinstance(data, ir.ListExpr):
                values = "[" + ", ".join(fx.eg.ex(i) for i in data.items) + "]"
            elif is_scalar(data.type):
                values = f"[{fx.eg.ex(data)}]"
            else:
                values = f"list({fx.eg.ex(data)})"
        return f"_logs.append(_fmt({msg.value!r}, {values}))"


class Check(ExternFunction):
    """assert / assume: a false condition appends "<name> failed at <where>" to the logs."""

    def __init__(self, name: str):
        self.name = name

    def emit(self, calls: Calls, fx: FnCtx, call: ir.Call, args: list[Any]) -> str:
        where = f"{self.name} failed at {call.loc}"
        fx.line(f"if not {fx.eg.ex(args[0])}:")
        with fx.indent():
            fx.line(f"_logs.append({where!r})")
        return ""


REPORTS = (Digest(), LogMsg(), Check("assert"), Check("assume"))
