"""hash(out, algorithm, base, data, max) and random(out, lo, hi) (v1model)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lgkit.sw.exec.externs.base import ExternFunction
from lgkit.sw.exec.interp import hashes
from lgkit.sw.exec.interp.bitdata import BitData
from lgkit.sw.exec.interp.exprs import fit, unsupported
from lgkit.sw.lang import ir
from lgkit.sw.lang.types import BitsT, InfIntT

if TYPE_CHECKING:
    from lgkit.sw.exec.interp.calls import Calls
    from lgkit.sw.exec.interp.fnctx import FnCtx


def algorithm(calls: Calls, call: ir.Call, e: ir.Expr) -> str:
    """The generated module's name for a constant HashAlgorithm's function."""
    if not isinstance(e, ir.TypeMember):
        raise unsupported(call, "a hash algorithm that is not a constant")
    if e.member not in hashes.ALGORITHMS:
        raise unsupported(call, f"HashAlgorithm.{e.member}")
    return calls.gen.const_obj(hashes.ALGORITHMS[e.member])


class Hash(ExternFunction):
    """out = base + H(data) % max (max 0: base). HashAlgorithm.random draws H uniformly below
    max from the pipeline's generator (seeded by Pipeline.load / seed())."""

    name = "hash"

    def emit(self, calls: Calls, fx: FnCtx, call: ir.Call, args: list[Any]) -> str:
        out, algo, base, data, maxv = args
        for arg, what in ((out, "result"), (base, "base"), (maxv, "max")):
            if not isinstance(arg.type, BitsT | InfIntT):
                raise unsupported(arg, f"a hash {what} that is not bit<W> or int<W>")
        h = fx.temp()
        if isinstance(algo, ir.TypeMember) and algo.member == "random":
            BitData(calls, fx).bytes_of(data)  # the data is evaluated, then ignored
            fx.line(f"{h} = _rng.getrandbits(64)")
        else:
            fn = algorithm(calls, call, algo)
            fx.line(f"{h} = {fn}({BitData(calls, fx).bytes_of(data)})")
        b, m = fx.eg.ex(base), fx.eg.ex(maxv)
        mconst = fx.eg.const_int(maxv)
        if mconst == 0:
            value = b
        elif mconst is not None:
            value = f"{b} + {h} % {mconst}"
        else:
            mt = fx.temp()
            fx.line(f"{mt} = {m}")
            value = f"({b} + {h} % {mt} if {mt} else {b})"
        fx.stmts.store_code(fx, out, fit(value, out.type))
        return ""


class Random(ExternFunction):
    """A value in [lo, hi] from the pipeline's generator (nothing when lo > hi)."""

    name = "random"

    def emit(self, calls: Calls, fx: FnCtx, call: ir.Call, args: list[Any]) -> str:
        for arg in args:
            if not isinstance(arg.type, BitsT | InfIntT):
                raise unsupported(arg, "random() of a value that is not bit<W> or int<W>")
        lo, hi = fx.eg.ex(args[1]), fx.eg.ex(args[2])
        tlo, thi = fx.temp(), fx.temp()
        fx.line(f"{tlo} = {lo}")
        fx.line(f"{thi} = {hi}")
        fx.line(f"if {tlo} <= {thi}:")
        with fx.indent():
            fx.stmts.store_code(fx, args[0], f"_rng.randint({tlo}, {thi})")
        return ""
