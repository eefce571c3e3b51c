"""Extern instances declared in a program: register, counter, meter, their direct forms, and
action profiles/selectors."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lgkit.sw.exec.interp import hashes
from lgkit.sw.exec.interp.action_profiles import ActionProfile
from lgkit.sw.exec.interp.exprs import unsupported
from lgkit.sw.exec.interp.externs import CounterArray, MeterArray, RegisterArray
from lgkit.sw.exec.interp.scope import ExternB
from lgkit.sw.lang import ir
from lgkit.sw.lang.frontend.consteval import const_value
from lgkit.sw.lang.types import BitsT, BoolT, EnumT, ExternT

if TYPE_CHECKING:
    from lgkit.sw.exec.interp.codegen import CodeGen

# Cells one register, counter or meter array may hold: each is a Python list allocated when the
# program loads (8 bytes a cell per list), so 2^22 cells cost 32-64 MB; 2^30 would cost GBs.
MAX_ARRAY_CELLS = 1 << 22
COUNTER_KINDS = {"packets": "packets", "bytes": "bytes", "packets_and_bytes": "packets_and_bytes"}


def const_arg(gen: CodeGen, e: ir.Expr) -> Any:
    """Evaluate a constructor argument (an int or an enum member name)."""
    if isinstance(e, ir.TypeMember):
        return e.member
    value = const_value(e)  # also a constant expression such as `512 * 8`
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise unsupported(e, "a non-constant constructor argument")


def make_extern(gen: CodeGen, d: ir.InstanceDecl, qname: str) -> ExternB:
    t = d.type_ref.resolved
    name = t.name if isinstance(t, ExternT) else d.type_ref.name
    args = [const_arg(gen, a.value) for a in d.args]
    var = f"X_{len(gen.externs)}"
    if name in ("register", "counter", "meter") and args and args[0] > MAX_ARRAY_CELLS:
        raise unsupported(d, f"{name} '{qname}' of {args[0]} cells: the built-in target holds "
                          f"at most {MAX_ARRAY_CELLS} cells per register, counter or meter")
    obj: Any
    if name == "register":
        elem = t.type_args[0] if isinstance(t, ExternT) and t.type_args else None
        if isinstance(elem, BitsT):
            width, signed = elem.width, elem.signed
        elif isinstance(elem, BoolT):
            width, signed = 1, False
        elif isinstance(elem, EnumT) and elem.underlying is not None:
            width, signed = elem.underlying.width, False
        else:
            raise unsupported(d, "register of a non-bit type")
        obj = RegisterArray(qname, int(args[0]), width, signed, gen.logs)
    elif name == "counter":
        obj = CounterArray(qname, int(args[0]), COUNTER_KINDS[str(args[1])], gen.logs)
    elif name == "meter":
        obj = MeterArray(qname, int(args[0]), str(args[1]), gen.logs)
    elif name == "direct_counter":
        obj = COUNTER_KINDS[str(args[0])]
    elif name == "direct_meter":
        obj = str(args[0])
    elif name == "action_profile":
        obj = ActionProfile(qname, int(args[0]), selector=False)
    elif name == "action_selector":
        algo = str(args[0])  # every v1model HashAlgorithm; None: random
        obj = ActionProfile(qname, int(args[1]), selector=True,
                            algorithm=hashes.ALGORITHMS.get(algo))
    else:
        raise unsupported(d, f"extern {name}")
    gen.ns[var] = obj
    return ExternB(var, name, qname, obj)
