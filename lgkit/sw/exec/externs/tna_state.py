"""TNA's stateful externs: Register<T, I>, RegisterAction<T, I, U> (its `apply` the instance's
own implementation, run by `execute`), DirectRegister<T> and DirectRegisterAction<T, U> (a cell
per entry of the table that names the register), Counter<W, I>, DirectCounter<W>, Meter<I>."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lgkit.sw.exec.externs.base import ExternType
from lgkit.sw.exec.externs.counter import Counter, CounterArray, DirectCounter
from lgkit.sw.exec.externs.meter import MeterArray
from lgkit.sw.exec.externs.register import Register, RegisterArray
from lgkit.sw.exec.interp.exprs import unsupported
from lgkit.sw.exec.interp.layout import is_scalar, size_of
from lgkit.sw.lang import ir
from lgkit.sw.lang.types import BitsT, ExternT, StructLikeT

if TYPE_CHECKING:
    from lgkit.sw.exec.interp.calls import Calls
    from lgkit.sw.exec.interp.codegen import CodeGen
    from lgkit.sw.exec.interp.fnctx import FnCtx
    from lgkit.sw.exec.interp.scope import ExternB


class StructRegister:
    """Register<S, I> of a struct S of bit fields: each cell the list of S's field values
    (written whole by a RegisterAction; the control plane reads and writes whole cells)."""

    def __init__(self, name: str, size: int, widths: list[int]):
        self.name = name
        self.size = size
        self.widths = widths
        self.values = [[0] * len(widths) for _ in range(size)]

    def read(self, index: int) -> list[int]:
        return list(self.values[index])

    def write(self, index: int, fields: list[int]) -> None:
        self.values[index][:] = [v & ((1 << w) - 1) for v, w in zip(fields, self.widths,
                                                                    strict=True)]


def struct_widths(decl: ir.InstanceDecl) -> list[int] | None:
    """The field widths of a register's element type when it is a struct of bit<W> fields."""
    t = decl.type_ref.resolved
    elem = t.type_args[0] if isinstance(t, ExternT) and t.type_args else None
    if isinstance(elem, StructLikeT) and elem.kind == "struct" and all(
            isinstance(ft, BitsT) for _, ft in elem.fields):
        return [ft.width for _, ft in elem.fields if isinstance(ft, BitsT)]
    return None


class Bound:
    """A RegisterAction's state: the register it reads and writes."""

    def __init__(self, register: RegisterArray | StructRegister):
        self.register = register


class TnaRegister(Register):
    """Register(size) / Register(size, initial_value): read and write as v1model's register;
    a struct element type only through RegisterAction."""

    name = "Register"

    def make(self, gen: CodeGen, decl: ir.InstanceDecl, qname: str, args: list[Any]) -> Any:
        widths = struct_widths(decl)
        if widths is not None:
            reg = StructRegister(qname, int(args[0]), widths)
            if len(args) > 1 and isinstance(args[1], list):
                reg.values = [list(args[1]) for _ in range(reg.size)]
            return reg
        array = super().make(gen, decl, qname, args[:1])
        if len(args) > 1 and isinstance(args[1], int):
            array.values[:] = [args[1] & ((1 << array.width) - 1)] * array.size
        return array

    def method(self, calls: Calls, fx: FnCtx, call: ir.Call, b: ExternB, name: str,
               args: list[ir.Expr]) -> str:
        if not isinstance(b.obj, RegisterArray):
            raise unsupported(call, f"Register.{name} of a struct register")
        if name == "read":
            target = fx.temp()
            fx.line(f"{target} = 0")
            fx.line(f"{target} = {b.var}.p4_read({fx.eg.ex(args[0])}, {target})")
            return target
        if name == "write":
            fx.line(f"{b.var}.p4_write({fx.eg.ex(args[0])}, {fx.eg.ex(args[1])})")
            return ""
        return super().method(calls, fx, call, b, name, args)


class RegisterAction(ExternType):
    """execute(index): the cell is copied into `apply`'s value parameter, `apply` runs (its rv
    reset to 0 first), the value is written back and rv returned; an index past the register's
    size is an error log entry and returns 0 (the cell untouched)."""

    name = "RegisterAction"

    def make(self, gen: CodeGen, decl: ir.InstanceDecl, qname: str, args: list[Any]) -> Any:
        reg = args[0]
        if not isinstance(getattr(reg, "obj", None), RegisterArray | StructRegister):
            raise unsupported(decl, "a RegisterAction of something other than a Register")
        return Bound(reg.obj)

    def method(self, calls: Calls, fx: FnCtx, call: ir.Call, b: ExternB, name: str,
               args: list[ir.Expr]) -> str:
        if name != "execute":
            raise unsupported(call, f"RegisterAction.{name}")
        reg = b.obj.register
        cells = calls.gen.const_obj(reg.values)
        i, out = fx.temp(), fx.temp()
        fx.line(f"{i} = {fx.eg.ex(args[0])}")
        fx.line(f"{out} = 0")
        fx.line(f"if {i} < {reg.size}:")
        with fx.indent():
            run_apply(fx, call, b, out, f"{cells}[{i}]")
        fx.line("else:")
        with fx.indent():
            message = f"error: register {reg.name}: RegisterAction index "
            fx.line(f"_logs.append({message!r} + str({i}) + ' out of range')")
        return out


def run_apply(fx: FnCtx, call: ir.Call, b: ExternB, out: str, cell: str) -> None:
    """The lines that run the instance's `apply` on `cell` (an lvalue): the cell into the value
    parameter, rv from 0, apply, the value back into the cell, rv into `out`."""
    fn = b.impls.get("apply")
    if fn is None:  # `this.execute()` in the instance's own apply
        raise unsupported(call, f"{b.kind}.execute of the instance inside its own apply")
    params = fn.decl.params
    value = fn.param_slots[params[0].name]
    rv = fn.param_slots[params[1].name] if len(params) > 1 else None
    if rv is not None and not is_scalar(rv.type):
        raise unsupported(call, f"a {b.kind} whose return value is not bit<W>")
    n = size_of(value.type)
    span = f"S[{value.base}]" if n == 1 and is_scalar(value.type) else \
        f"S[{value.base}:{value.base + n}]"
    fx.line(f"{span} = {cell}")
    if rv is not None:
        fx.line(f"S[{rv.base}] = 0")
    fx.line(f"{fn.fn}(S, P)")
    fx.line(f"{cell} = {span}")
    if rv is not None:
        fx.line(f"{out} = S[{rv.base}]")


class DirectCells:
    """A DirectRegister<T>: one cell per entry of the table that names it (`registers = r`),
    kept on the entry (TableEntry.register; None until first executed: `initial`)."""

    def __init__(self, name: str, initial: int | list[int]):
        self.name = name
        self.initial = initial


class TnaDirectRegister(ExternType):
    """DirectRegister() / DirectRegister(initial_value): cells only a DirectRegisterAction
    reaches (read / write of the register itself are refused)."""

    name = "DirectRegister"

    def make(self, gen: CodeGen, decl: ir.InstanceDecl, qname: str, args: list[Any]) -> Any:
        widths = struct_widths(decl)
        if widths is not None:
            given = list(args[0]) if args and isinstance(args[0], list) else [0] * len(widths)
            return DirectCells(qname, [v & ((1 << w) - 1)
                                       for v, w in zip(given, widths, strict=True)])
        t = decl.type_ref.resolved
        elem = t.type_args[0] if isinstance(t, ExternT) and t.type_args else None
        if not isinstance(elem, BitsT):
            raise unsupported(decl, "a DirectRegister of something other than bit<W> or a "
                              "struct of bit<W> fields")
        return DirectCells(qname, int(args[0]) & ((1 << elem.width) - 1) if args else 0)

    def method(self, calls: Calls, fx: FnCtx, call: ir.Call, b: ExternB, name: str,
               args: list[ir.Expr]) -> str:
        raise unsupported(call, f"DirectRegister.{name} (the built-in target reaches a "
                          "DirectRegister through a DirectRegisterAction)")


class DirectRegisterAction(ExternType):
    """execute(): `apply` on the cell of the entry its register's table hit in this pass (the
    table that names it, applied last); on a miss, or from another table's action, nothing runs
    and it returns 0 (the model's choice: a miss has no entry to address)."""

    name = "DirectRegisterAction"

    def make(self, gen: CodeGen, decl: ir.InstanceDecl, qname: str, args: list[Any]) -> Any:
        reg = args[0]
        if not isinstance(getattr(reg, "obj", None), DirectCells):
            raise unsupported(decl, "a DirectRegisterAction of something other than a "
                              "DirectRegister")
        return reg.obj

    def method(self, calls: Calls, fx: FnCtx, call: ir.Call, b: ExternB, name: str,
               args: list[ir.Expr]) -> str:
        if name != "execute":
            raise unsupported(call, f"DirectRegisterAction.{name}")
        cells: DirectCells = b.obj
        hit, out = fx.temp(), fx.temp()
        fx.line(f"{out} = 0")
        fx.line(f"{hit} = P.dreg[1] if P.dreg is not None and P.dreg[0] == {cells.name!r} "
                "else None")
        fx.line(f"if {hit} is not None:")
        with fx.indent():
            initial = calls.gen.const_obj(cells.initial)
            copy = "[:]" if isinstance(cells.initial, list) else ""
            fx.line(f"if {hit}.register is None:")
            with fx.indent():
                fx.line(f"{hit}.register = {initial}{copy}")
            run_apply(fx, call, b, out, f"{hit}.register")
        return out


class TnaCounter(Counter):
    """Counter<W, I>(size, CounterType_t): count(index) as v1model's counter (the optional
    adjust_byte_count is not modelled)."""

    name = "Counter"

    def make(self, gen: CodeGen, decl: ir.InstanceDecl, qname: str, args: list[Any]) -> Any:
        return CounterArray(qname, int(args[0]), str(args[1]).lower(), gen.logs)

    def method(self, calls: Calls, fx: FnCtx, call: ir.Call, b: ExternB, name: str,
               args: list[ir.Expr]) -> str:
        if len(args) > 1 and not isinstance(args[1], ir.DontCare):
            raise unsupported(call, "Counter.count with adjust_byte_count")
        return super().method(calls, fx, call, b, name, args[:1])


class TnaDirectCounter(DirectCounter):
    """DirectCounter<W>(CounterType_t): counted by its table on a hit, as v1model's."""

    name = "DirectCounter"

    def make(self, gen: CodeGen, decl: ir.InstanceDecl, qname: str, args: list[Any]) -> Any:
        return str(args[0]).lower()


class TnaMeter(ExternType):
    """Meter<I>(size, MeterType_t[, red, yellow, green]): execute(index) marks the packet as
    v1model's meter does (RFC 2698, colour-blind; rates from the control plane, unconfigured:
    green) and returns the colour's value (MeterColor_t: GREEN 0, YELLOW 1, RED 3, or the
    constructor's own). A colour-aware execute and adjust_byte_count are refused."""

    name = "Meter"
    cells_arg = 0

    def make(self, gen: CodeGen, decl: ir.InstanceDecl, qname: str, args: list[Any]) -> Any:
        colours = [int(a) for a in args[2:5]] if len(args) >= 5 else [3, 1, 0]
        array = MeterArray(qname, int(args[0]), str(args[1]).lower(), gen.logs)
        gen.ns[f"_colours_{id(array)}"] = tuple(reversed(colours))  # GREEN, YELLOW, RED
        return array

    def method(self, calls: Calls, fx: FnCtx, call: ir.Call, b: ExternB, name: str,
               args: list[ir.Expr]) -> str:
        if name != "execute":
            return super().method(calls, fx, call, b, name, args)
        if len(args) > 1 and not isinstance(args[1], ir.DontCare):
            raise unsupported(call, "Meter.execute with a colour or adjust_byte_count")
        colour = fx.temp()
        fx.line(f"{colour} = _colours_{id(b.obj)}[{b.var}.execute({fx.eg.ex(args[0])}, "
                "P.count_len, P.now)]")
        return colour


STATE = (TnaRegister(), RegisterAction(), TnaDirectRegister(), DirectRegisterAction(),
         TnaCounter(), TnaDirectCounter(), TnaMeter())
