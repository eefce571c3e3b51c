"""counter(size, kind) and direct_counter(kind): packet and byte counts (a direct counter's
live on its table's entries)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lgkit.sw.exec.externs.base import ExternType
from lgkit.sw.lang import ir

if TYPE_CHECKING:
    from lgkit.sw.exec.interp.calls import Calls
    from lgkit.sw.exec.interp.codegen import CodeGen
    from lgkit.sw.exec.interp.fnctx import FnCtx
    from lgkit.sw.exec.interp.scope import ExternB

COUNTER_KINDS = {"packets": "packets", "bytes": "bytes", "packets_and_bytes": "packets_and_bytes"}


class CounterArray:
    """counter(size, kind); kind is 'packets', 'bytes' or 'packets_and_bytes'. The generated
    code updates `packets` and `bytes` directly in range (the list objects never change)."""

    def __init__(self, name: str, size: int, kind: str, logs: list[str]):
        self.name = name
        self.size = size
        self.kind = kind
        self.packets = [0] * size
        self.bytes = [0] * size
        self._logs = logs

    def read(self, index: int) -> tuple[int, int]:
        return (self.packets[index], self.bytes[index])

    def write(self, index: int, packets: int, nbytes: int) -> None:
        self.packets[index] = packets
        self.bytes[index] = nbytes

    def reset(self) -> None:
        self.packets[:] = [0] * self.size  # in place: generated code holds the lists
        self.bytes[:] = [0] * self.size

    def count(self, index: int, length: int) -> None:
        if index >= self.size:
            self._logs.append(f"error: counter {self.name}: index {index} out of range")
            return
        self.packets[index] += 1
        self.bytes[index] += length


class Counter(ExternType):
    """In range, count is list operations inline; out of range, CounterArray.count logs it."""

    name = "counter"
    cells_arg = 0

    def make(self, gen: CodeGen, decl: ir.InstanceDecl, qname: str, args: list[Any]) -> Any:
        return CounterArray(qname, int(args[0]), COUNTER_KINDS[str(args[1])], gen.logs)

    def method(self, calls: Calls, fx: FnCtx, call: ir.Call, b: ExternB, name: str,
               args: list[ir.Expr]) -> str:
        if name != "count":
            return super().method(calls, fx, call, b, name, args)
        i = fx.temp()
        fx.line(f"{i} = {fx.eg.ex(args[0])}")
        fx.line(f"if {i} < {b.obj.size}:")
        with fx.indent():
            fx.line(f"{calls.gen.const_obj(b.obj.packets)}[{i}] += 1")
            fx.line(f"{calls.gen.const_obj(b.obj.bytes)}[{i}] += P.count_len")
        fx.line("else:")
        with fx.indent():
            fx.line(f"{b.var}.count({i}, P.count_len)")
        return ""


class DirectCounter(ExternType):
    """Counted by the table on a hit (tablegen.py); count() itself does nothing."""

    name = "direct_counter"

    def make(self, gen: CodeGen, decl: ir.InstanceDecl, qname: str, args: list[Any]) -> Any:
        return COUNTER_KINDS[str(args[0])]

    def method(self, calls: Calls, fx: FnCtx, call: ir.Call, b: ExternB, name: str,
               args: list[ir.Expr]) -> str:
        return "" if name == "count" else super().method(calls, fx, call, b, name, args)
