"""Poll P4 counters and registers of switches at an interval into a tidy table.

One row per sample and cell: labels, t_s, switch, name, index, packets, bytes, value (packets
and bytes for counters, value for registers). Counters are read over P4Runtime, all cells of
a switch in one Read request. Registers are read with the runtime CLI's `register_read` (BMv2's
P4Runtime server implements no register reads; the built-in switch answers both), all cells of
a switch in one CLI call.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import finsy

from lgkit.measure.results import RunStore

COLUMNS = ("t_s", "switch", "name", "index", "packets", "bytes", "value")


@dataclass(frozen=True)
class Cell:
    """One counter or register cell of one switch."""

    switch: str
    kind: str
    "counter or register"
    name: str
    index: int
    clear: bool = False
    "A register the poller sets to 0 after each read (a maximum since the last sample)."

    def entity(self) -> Any:
        """The finsy entity that reads this cell."""
        if self.kind == "counter":
            return finsy.P4CounterEntry(self.name, index=self.index)
        if self.kind == "register":
            return finsy.P4RegisterEntry(self.name, index=self.index)
        raise ValueError(f"a cell is a counter or a register, not {self.kind!r}")


Values = dict[Cell, dict[str, int]]
Reader = Callable[[Sequence[Cell]], Values]
"Reads cells of one switch: counters -> packets, bytes; registers -> value."
_REGISTER_LINE = re.compile(r"(\w+)\[(\d+)\]\s*=\s*(\d+)")


def read_cells(p4rt_read: Callable[[Any], list[Any]], cells: Sequence[Cell]) -> Values:
    """Cells of one switch read over P4Runtime (P4RuntimeSession.read), in one Read request."""
    if not cells:
        return {}
    by_key: dict[tuple[str, int | None], Cell] = {(c.name, c.index): c for c in cells}
    values: dict[Cell, dict[str, int]] = {}
    for entity in p4rt_read([c.entity() for c in cells]):
        if isinstance(entity, finsy.P4CounterEntry):
            cell = by_key.get((entity.counter_id, entity.index))
            data = entity.data
            if cell is not None:
                values[cell] = {"packets": int(data.packet_count) if data else 0,
                                "bytes": int(data.byte_count) if data else 0}
        elif isinstance(entity, finsy.P4RegisterEntry):
            cell = by_key.get((entity.register_id, entity.index))
            if cell is not None:
                values[cell] = {"value": int(entity.data) if entity.data is not None else 0}
    return values


def cli_registers(run_cli: Callable[[list[str]], str], cells: Sequence[Cell]) -> Values:
    """Register cells read with `register_read` (then cleared if asked) in one runtime-CLI
    call: BMv2's simple_switch_CLI answers `name[index]= value`, the built-in switch one value
    per line."""
    if not cells:
        return {}
    out = run_cli([f"register_read {c.name} {c.index}" for c in cells]
                  + [f"register_write {c.name} {c.index} 0" for c in cells if c.clear])
    tagged = {(m.group(1).rsplit(".", 1)[-1], int(m.group(2))): int(m.group(3))
              for m in _REGISTER_LINE.finditer(out)}
    if tagged:
        return {c: {"value": tagged[(c.name, c.index)]} for c in cells
                if (c.name, c.index) in tagged}
    numbers = [int(line) for line in out.split() if line.strip().isdigit()]
    if len(numbers) != len(cells):
        raise ValueError(f"register_read gave {len(numbers)} values for {len(cells)} cells")
    return {c: {"value": v} for c, v in zip(cells, numbers, strict=True)}


def switch_reader(p4rt_read: Callable[[Any], list[Any]],
                  run_cli: Callable[[list[str]], str]) -> Reader:
    """A Reader for one switch: counters over P4Runtime, registers through the runtime CLI."""

    def read(cells: Sequence[Cell]) -> Values:
        counters = [c for c in cells if c.kind == "counter"]
        registers = [c for c in cells if c.kind == "register"]
        return {**read_cells(p4rt_read, counters), **cli_registers(run_cli, registers)}

    return read


class P4Poller:
    """Samples cells of several switches every interval into `table` (a thread)."""

    def __init__(self, store: RunStore, table: str, readers: dict[str, Reader],
                 cells: Sequence[Cell], interval_s: float = 0.1,
                 labels: dict[str, Any] | None = None) -> None:
        self.store, self.table, self.readers = store, table, readers
        self.cells, self.interval_s, self.labels = list(cells), interval_s, labels or {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="p4-poller")
        self._t0 = time.monotonic()
        self.errors = 0

    def sample(self) -> None:
        """Read every cell once and append the rows."""
        t = round(time.monotonic() - self._t0, 4)
        for switch, reader in self.readers.items():
            cells = [c for c in self.cells if c.switch == switch]
            if not cells:
                continue
            for cell, data in reader(cells).items():
                self.store.append(self.table, {
                    **self.labels, "t_s": t, "switch": switch, "name": cell.name,
                    "index": cell.index, "packets": data.get("packets", ""),
                    "bytes": data.get("bytes", ""), "value": data.get("value", "")})

    def _loop(self) -> None:
        next_at = time.monotonic()
        while True:
            next_at += self.interval_s
            if self._stop.wait(max(0.0, next_at - time.monotonic())):
                return
            try:
                self.sample()
            except Exception:  # noqa: BLE001 (a failed poll must not end the run; counted)
                self.errors += 1

    def __enter__(self) -> P4Poller:
        self._t0 = time.monotonic()
        self.sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(self.interval_s + 10)
