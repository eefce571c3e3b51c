"""meter(size, kind) and direct_meter(kind): RFC 2698 two-rate three-colour markers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lgkit.sw.exec.externs.base import ExternType
from lgkit.sw.exec.interp.exprs import fit
from lgkit.sw.lang import ir

if TYPE_CHECKING:
    from lgkit.sw.exec.interp.calls import Calls
    from lgkit.sw.exec.interp.codegen import CodeGen
    from lgkit.sw.exec.interp.fnctx import FnCtx
    from lgkit.sw.exec.interp.scope import ExternB

GREEN, YELLOW, RED = 0, 1, 2


class TrTcm:
    """RFC 2698 two-rate three-colour marker, colour-blind. Rates in units per second, bursts
    in units (units are packets or bytes). State: [tc, tp, last_us]."""

    @staticmethod
    def new_state(config: tuple[tuple[int, int], tuple[int, int]]) -> list[float]:
        (_, cburst), (_, pburst) = config
        return [float(cburst), float(pburst), -1.0]

    @staticmethod
    def mark(
        config: tuple[tuple[int, int], tuple[int, int]], state: list[float], units: int, now: int
    ) -> int:
        (cir, cburst), (pir, pburst) = config
        tc, tp, last = state
        if last >= 0 and now > last:
            elapsed = (now - last) / 1e6
            tc = min(float(cburst), tc + cir * elapsed)
            tp = min(float(pburst), tp + pir * elapsed)
        state[2] = float(now) if now > last else last
        if tp < units:
            state[0], state[1] = tc, tp
            return RED
        if tc < units:
            state[0], state[1] = tc, tp - units
            return YELLOW
        state[0], state[1] = tc - units, tp - units
        return GREEN


class MeterArray:
    """meter(size, kind); kind is 'packets' or 'bytes'. An unconfigured meter returns GREEN."""

    def __init__(self, name: str, size: int, kind: str, logs: list[str]):
        self.name = name
        self.size = size
        self.kind = kind
        self.configs: list[tuple[tuple[int, int], tuple[int, int]] | None] = [None] * size
        self._states: list[list[float] | None] = [None] * size
        self._logs = logs

    def set_rates(self, index: int, committed: tuple[int, int], peak: tuple[int, int]) -> None:
        """Configure cell `index`: (cir, cburst), (pir, pburst); rates in units per second."""
        if not 0 <= index < self.size:
            raise IndexError(f"{self.name}: index {index} out of range")
        self.configs[index] = (committed, peak)
        self._states[index] = TrTcm.new_state((committed, peak))

    def get_rates(self, index: int) -> tuple[tuple[int, int], tuple[int, int]] | None:
        return self.configs[index]

    def reset_rates(self, index: int) -> None:
        self.configs[index] = None
        self._states[index] = None

    def execute(self, index: int, length: int, now_us: int) -> int:
        if index >= self.size:
            self._logs.append(f"error: meter {self.name}: index {index} out of range")
            return GREEN
        config = self.configs[index]
        state = self._states[index]
        if config is None or state is None:
            return GREEN
        return TrTcm.mark(config, state, 1 if self.kind == "packets" else length, now_us)


def direct_meter_execute(entry: object, packets: bool, length: int, now_us: int) -> int:
    """Run an entry's direct meter (on a hit); an unconfigured meter gives GREEN."""
    config = getattr(entry, "meter_config", None)
    if config is None:
        return GREEN
    state = entry.meter_state  # type: ignore[attr-defined]
    if state is None:
        state = entry.meter_state = TrTcm.new_state(config)  # type: ignore[attr-defined]
    return TrTcm.mark(config, state, 1 if packets else length, now_us)


class Meter(ExternType):
    name = "meter"
    cells_arg = 0

    def make(self, gen: CodeGen, decl: ir.InstanceDecl, qname: str, args: list[Any]) -> Any:
        return MeterArray(qname, int(args[0]), str(args[1]), gen.logs)

    def method(self, calls: Calls, fx: FnCtx, call: ir.Call, b: ExternB, name: str,
               args: list[ir.Expr]) -> str:
        if name != "execute_meter":
            return super().method(calls, fx, call, b, name, args)
        idx = fx.eg.ex(args[0])
        color = fx.temp()  # executed even when the result is discarded (`_`)
        fx.line(f"{color} = {b.var}.execute({idx}, P.count_len, P.now)")
        fx.stmts.store_code(fx, args[1], fit(color, args[1].type))
        return ""


class DirectMeter(ExternType):
    """Executed by the table on a hit (tablegen.py: `_dmeter`, the colour in P.dm)."""

    name = "direct_meter"

    def make(self, gen: CodeGen, decl: ir.InstanceDecl, qname: str, args: list[Any]) -> Any:
        gen.ns["_dmeter"] = direct_meter_execute
        return str(args[0])

    def method(self, calls: Calls, fx: FnCtx, call: ir.Call, b: ExternB, name: str,
               args: list[ir.Expr]) -> str:
        if name != "read":
            return super().method(calls, fx, call, b, name, args)
        fx.stmts.store_code(fx, args[0], fit("P.dm", args[0].type))
        return ""
