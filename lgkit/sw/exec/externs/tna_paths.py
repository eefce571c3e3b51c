"""TNA's deparser externs that send a packet elsewhere or report it: Mirror, Resubmit, Digest.
Each records its request in the pass's context (the passes act on it: arch/tna/passes.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lgkit.sw.exec.externs.base import ExternType
from lgkit.sw.exec.externs.reports import Digest as V1Digest
from lgkit.sw.exec.interp.bitdata import BitData
from lgkit.sw.exec.interp.exprs import unsupported
from lgkit.sw.exec.interp.packetgen import _emit
from lgkit.sw.exec.interp.runtime import deparse
from lgkit.sw.lang import ir

if TYPE_CHECKING:
    from lgkit.sw.exec.interp.calls import Calls
    from lgkit.sw.exec.interp.codegen import CodeGen
    from lgkit.sw.exec.interp.fnctx import FnCtx
    from lgkit.sw.exec.interp.scope import ExternB


def header_bytes(calls: Calls, fx: FnCtx, e: ir.Expr | None) -> str:
    """Code for the bytes a deparser would emit for `e` (b"" for none; a list of fields
    their bits in order)."""
    if e is None or isinstance(e, ir.DontCare):
        return 'b""'
    if isinstance(e, ir.ListExpr | ir.StructExpr):  # `emit<H>(session, {f, g, ...})`
        return BitData(calls, fx).bytes_of(e)
    saved, out = fx.temp(), fx.temp()
    fx.line(f"{saved} = P.out")
    fx.line("P.out = []")
    _emit(fx, e)
    fx.line(f"{out} = {calls.gen.const_obj(deparse)}(P.out)")
    fx.line(f"P.out = {saved}")
    return out


class _InDeparser(ExternType):
    """An extern whose one method is called in a deparser; its state is its type argument."""

    def make(self, gen: CodeGen, decl: ir.InstanceDecl, qname: str, args: list[Any]) -> Any:
        return qname

    def method(self, calls: Calls, fx: FnCtx, call: ir.Call, b: ExternB, name: str,
               args: list[ir.Expr]) -> str:
        if fx.kind != "control":
            raise unsupported(call, f"{self.name}.{name} outside a deparser")
        return self.emit(calls, fx, call, b, args)

    def emit(self, calls: Calls, fx: FnCtx, call: ir.Call, b: ExternB,
             args: list[ir.Expr]) -> str:
        raise NotImplementedError


class Mirror(_InDeparser):
    """emit(session_id[, hdr]): P.clone = (session, the mirror header's bytes)."""

    name = "Mirror"

    def emit(self, calls: Calls, fx: FnCtx, call: ir.Call, b: ExternB,
             args: list[ir.Expr]) -> str:
        hdr = header_bytes(calls, fx, args[1] if len(args) > 1 else None)
        return f"P.clone = ({fx.eg.ex(args[0])}, {hdr})"


class Resubmit(_InDeparser):
    """emit([hdr]): P.resubmit = the resubmit header's bytes (at most 8, PORT_METADATA_SIZE)."""

    name = "Resubmit"

    def emit(self, calls: Calls, fx: FnCtx, call: ir.Call, b: ExternB,
             args: list[ir.Expr]) -> str:
        hdr = header_bytes(calls, fx, args[0] if args else None)
        return f"P.resubmit = {hdr}"


class Digest(_InDeparser):
    """pack(data): P.digest = (the instance's name, e.g. `IgDeparser.learn`, its field values),
    as v1model's digest; P4Runtime finds the digest by that name (P4Info's, without `pipe.`)."""

    name = "Digest"

    def emit(self, calls: Calls, fx: FnCtx, call: ir.Call, b: ExternB,
             args: list[ir.Expr]) -> str:
        return V1Digest().emit(calls, fx, call, [None, args[0]], name=str(b.obj))


PATHS = (Mirror(), Resubmit(), Digest())
