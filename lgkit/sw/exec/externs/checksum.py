"""verify_checksum / update_checksum and their _with_payload forms (v1model)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lgkit.sw.exec.externs.base import ExternFunction
from lgkit.sw.exec.externs.hash import algorithm
from lgkit.sw.exec.interp.bitdata import BitData
from lgkit.sw.exec.interp.exprs import fit, unsupported
from lgkit.sw.lang import ir

if TYPE_CHECKING:
    from lgkit.sw.exec.interp.calls import Calls
    from lgkit.sw.exec.interp.fnctx import FnCtx


class Checksum(ExternFunction):
    """If cond: compute the checksum of data (and the payload) and store it in the target, or
    compare it with the target and set standard_metadata.checksum_error when they differ."""

    def __init__(self, name: str, update: bool, payload: bool):
        self.name = name
        self.update = update
        self.payload = payload

    def emit(self, calls: Calls, fx: FnCtx, call: ir.Call, args: list[Any]) -> str:
        cond, data, target, algo = args
        fn = algorithm(calls, call, algo)
        blob = BitData(calls, fx).bytes_of(data)
        if self.payload:
            blob = f"{blob} + P.payload"
        checksum = f"{fn}({blob})"
        if algo.member == "csum16" and not self.payload and blob.startswith("_pack("):
            checksum = f"_csum16_bits{blob[len('_pack'):]}"  # the same sum, on the integer
        fx.line(f"if {fx.eg.ex(cond)}:")
        with fx.indent():
            value = fit(checksum, target.type)
            if self.update:
                fx.stmts.store_code(fx, target, value)
            else:
                err = calls.gen.sm_ref("checksum_error")
                if err is None:
                    raise unsupported(call, "verify_checksum without standard_metadata")
                fx.line(f"if {value} != {fx.eg.ex(target)}:")
                with fx.indent():
                    fx.line(f"{err} = 1")
        return ""


CHECKSUMS = (
    Checksum("verify_checksum", update=False, payload=False),
    Checksum("update_checksum", update=True, payload=False),
    Checksum("verify_checksum_with_payload", update=False, payload=True),
    Checksum("update_checksum_with_payload", update=True, payload=True),
)
