"""TNA's extern functions min(a, b) and max(a, b) (of bit<W> or int<W> values), and
port_metadata_unpack<T>(pkt) in the ingress parser."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lgkit.sw.exec.externs.base import ExternFunction
from lgkit.sw.exec.interp.exprs import unsupported
from lgkit.sw.exec.interp.packetgen import _read_header
from lgkit.sw.lang.types import BitsT, StructLikeT

if TYPE_CHECKING:
    from lgkit.sw.exec.interp.calls import Calls
    from lgkit.sw.exec.interp.fnctx import FnCtx
    from lgkit.sw.lang import ir

PORT_METADATA_TYPE = "_tna_port_metadata"  # the namespace key of the port metadata type


class MinMax(ExternFunction):
    def __init__(self, name: str):
        self.name = name

    def emit(self, calls: Calls, fx: FnCtx, call: ir.Call, args: list[Any]) -> str:
        if not all(isinstance(a.type, BitsT) for a in args):
            raise unsupported(call, f"{self.name} of values that are not bit<W> or int<W>")
        return f"{self.name}({fx.eg.ex(args[0])}, {fx.eg.ex(args[1])})"


class PortMetadataUnpack(ExternFunction):
    """T read from the 64 bits of port metadata (or resubmit data) where the parser is, which
    it then skips (tofino1_specs.p4: PORT_METADATA_SIZE). T, the program's one port metadata
    type, is kept in the code's namespace (PORT_METADATA_TYPE) for the control plane's
    per-port values (arch/tna/port_metadata.py)."""

    name = "port_metadata_unpack"

    def emit(self, calls: Calls, fx: FnCtx, call: ir.Call, args: list[Any]) -> str:
        t = call.type
        if fx.kind != "parser" or not isinstance(t, StructLikeT) or t.kind != "struct":
            raise unsupported(call, "port_metadata_unpack of a non-struct or outside a parser")
        if calls.gen.ns.setdefault(PORT_METADATA_TYPE, t) .name != t.name:
            raise unsupported(call, "port_metadata_unpack of two types in one program")
        values = _read_header(calls.gen, fx, t, fx.temp(), padded=False)
        fx.line("pos += 64")
        return "[" + ", ".join(values) + "]"


FUNCTIONS = (MinMax("min"), MinMax("max"), PortMetadataUnpack())
