"""TNA's Hash<W>(algorithm).get(data), Random<W>().get() and Checksum().update(data) (the
16-bit ones' complement checksum of a deparser)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lgkit.sw.exec.externs.base import ExternType
from lgkit.sw.exec.interp import hashes
from lgkit.sw.exec.interp.bitdata import BitData
from lgkit.sw.exec.interp.exprs import unsupported
from lgkit.sw.exec.interp.layout import scalar_width
from lgkit.sw.lang import ir
from lgkit.sw.lang.types import ExternT

if TYPE_CHECKING:
    from lgkit.sw.exec.interp.calls import Calls
    from lgkit.sw.exec.interp.codegen import CodeGen
    from lgkit.sw.exec.interp.fnctx import FnCtx
    from lgkit.sw.exec.interp.scope import ExternB

# HashAlgorithm_t -> the function of interp/hashes.py (BMv2's crc16 / crc32 / identity / xor16);
# RANDOM draws from the pipeline's generator; CRC8, CRC64, XOR8, XOR32, CUSTOM are refused
TNA_ALGORITHMS = {"IDENTITY": "identity", "CRC16": "crc16", "CRC32": "crc32", "XOR16": "xor16"}


def _width(decl: ir.InstanceDecl) -> int:
    t = decl.type_ref.resolved
    assert isinstance(t, ExternT) and t.type_args
    return scalar_width(t.type_args[0])


class TnaHash(ExternType):
    """get(data): the algorithm over data's bytes, its low W bits."""

    name = "Hash"

    def make(self, gen: CodeGen, decl: ir.InstanceDecl, qname: str, args: list[Any]) -> Any:
        if len(args) != 1 or args[0] not in (*TNA_ALGORITHMS, "RANDOM"):
            raise unsupported(decl, f"Hash algorithm {args[0]} (the built-in target has "
                              f"{', '.join(TNA_ALGORITHMS)}, RANDOM)")
        return (args[0], _width(decl))

    def method(self, calls: Calls, fx: FnCtx, call: ir.Call, b: ExternB, name: str,
               args: list[ir.Expr]) -> str:
        algo, width = b.obj
        data = BitData(calls, fx).bytes_of(args[0])
        if algo == "RANDOM":
            return f"_rng.getrandbits({width})"
        fn = calls.gen.const_obj(hashes.ALGORITHMS[TNA_ALGORITHMS[algo]])
        return f"({fn}({data}) & {hex((1 << width) - 1)})"


class TnaRandom(ExternType):
    """get(): W random bits from the pipeline's generator (seeded: Pipeline.load / seed())."""

    name = "Random"

    def make(self, gen: CodeGen, decl: ir.InstanceDecl, qname: str, args: list[Any]) -> Any:
        return _width(decl)

    def method(self, calls: Calls, fx: FnCtx, call: ir.Call, b: ExternB, name: str,
               args: list[ir.Expr]) -> str:
        return f"_rng.getrandbits({b.obj})"


class TnaChecksum(ExternType):
    """update(data): the csum16 of data (a deparser's checksum); the parser's add / subtract /
    verify / get are refused."""

    name = "Checksum"

    def make(self, gen: CodeGen, decl: ir.InstanceDecl, qname: str, args: list[Any]) -> Any:
        return qname

    def method(self, calls: Calls, fx: FnCtx, call: ir.Call, b: ExternB, name: str,
               args: list[ir.Expr]) -> str:
        if name != "update" or (len(args) > 1 and not isinstance(args[1], ir.DontCare)):
            raise unsupported(call, f"Checksum.{name} (the built-in target has update(data))")
        fn = calls.gen.const_obj(hashes.ALGORITHMS["csum16"])
        return f"{fn}({BitData(calls, fx).bytes_of(args[0])})"


HASHES = (TnaHash(), TnaRandom(), TnaChecksum())
