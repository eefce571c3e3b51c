"""register<T>(size): read/write of an array of values (BMv2: out of range is an error log)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lgkit.sw.exec.externs.base import ExternType
from lgkit.sw.exec.interp.exprs import unsupported
from lgkit.sw.lang import ir
from lgkit.sw.lang.types import BitsT, BoolT, EnumT, ExternT

if TYPE_CHECKING:
    from lgkit.sw.exec.interp.calls import Calls
    from lgkit.sw.exec.interp.codegen import CodeGen
    from lgkit.sw.exec.interp.fnctx import FnCtx
    from lgkit.sw.exec.interp.scope import ExternB


class RegisterArray:
    """register<bit<W>>(size). Values are stored unsigned; out-of-range access is an error log
    entry (read leaves the destination unchanged, write does nothing), as in BMv2. The
    generated code indexes `values` directly in range (the list object never changes)."""

    def __init__(self, name: str, size: int, width: int, signed: bool, logs: list[str]):
        self.name = name
        self.size = size
        self.width = width
        self.signed = signed
        self.values = [0] * size
        self._mask = (1 << width) - 1
        self._logs = logs

    def read(self, index: int) -> int:
        return self.values[index]

    def write(self, index: int, value: int) -> None:
        if not 0 <= index < self.size:
            raise IndexError(f"{self.name}: index {index} out of range")
        self.values[index] = value & self._mask

    def reset(self) -> None:
        self.values[:] = [0] * self.size  # in place: generated code holds the list

    def p4_read(self, index: int, current: int) -> int:
        """The value a P4 `read` stores (signed for int<W>), or `current` when out of range."""
        if index >= self.size:
            self._logs.append(f"error: register {self.name}: read index {index} out of range")
            return current
        value = self.values[index]
        if self.signed and value >> (self.width - 1):
            value -= 1 << self.width
        return value

    def p4_write(self, index: int, value: int) -> None:
        if index >= self.size:
            self._logs.append(f"error: register {self.name}: write index {index} out of range")
            return
        self.values[index] = value & self._mask


class Register(ExternType):
    """In range, read and write are list operations inline (no method call); out of range, the
    array's p4_read / p4_write log the error."""

    name = "register"
    cells_arg = 0

    def make(self, gen: CodeGen, decl: ir.InstanceDecl, qname: str, args: list[Any]) -> Any:
        t = decl.type_ref.resolved
        elem = t.type_args[0] if isinstance(t, ExternT) and t.type_args else None
        if isinstance(elem, BitsT):
            width, signed = elem.width, elem.signed
        elif isinstance(elem, BoolT):
            width, signed = 1, False
        elif isinstance(elem, EnumT) and elem.underlying is not None:
            width, signed = elem.underlying.width, False
        else:
            raise unsupported(decl, "register of a non-bit type")
        return RegisterArray(qname, int(args[0]), width, signed, gen.logs)

    def method(self, calls: Calls, fx: FnCtx, call: ir.Call, b: ExternB, name: str,
               args: list[ir.Expr]) -> str:
        if name == "read":
            idx = fx.eg.ex(args[1])
            if isinstance(args[0], ir.DontCare):
                return ""
            return _read(calls, fx, b, idx, fx.eg.place(args[0]).ref())
        if name == "write":
            return _write(calls, fx, b, fx.eg.ex(args[0]), args[1])
        return super().method(calls, fx, call, b, name, args)


def _read(calls: Calls, fx: FnCtx, b: ExternB, idx: str, target: str) -> str:
    if b.obj.signed:
        return f"{target} = {b.var}.p4_read({idx}, {target})"
    i = fx.temp()
    fx.line(f"{i} = {idx}")
    fx.line(f"if {i} < {b.obj.size}:")
    with fx.indent():
        fx.line(f"{target} = {calls.gen.const_obj(b.obj.values)}[{i}]")
    fx.line("else:")
    with fx.indent():
        fx.line(f"{target} = {b.var}.p4_read({i}, {target})")
    return ""


def _write(calls: Calls, fx: FnCtx, b: ExternB, idx: str, value: ir.Expr) -> str:
    i = fx.temp()
    fx.line(f"{i} = {idx}")
    fx.line(f"if {i} < {b.obj.size}:")
    with fx.indent():
        values = calls.gen.const_obj(b.obj.values)
        fx.line(f"{values}[{i}] = ({fx.eg.ex(value)}) & {hex((1 << b.obj.width) - 1)}")
    fx.line("else:")
    with fx.indent():
        fx.line(f"{b.var}.p4_write({i}, {fx.eg.ex(value)})")
    return ""
