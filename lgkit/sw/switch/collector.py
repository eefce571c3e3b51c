"""A switch process and Python's cyclic garbage collector: what a program load leaves behind, and
table entries added at run time, are frozen out of later collections; every collection is timed.

A full (generation 2) collection walks every container object the process holds. With the
LinkGuardian program loaded that stalled the LG sender's packet loop for 36 ms once in a
`reproduce fig11` run: a TCP flow caught in it took 15-25 ms instead of 1. The program's objects
(generated code, tables, registers) live as long as the program, so after each load they move
to the collector's permanent generation; collections then walk only what packets allocated.
Table entries written at run time live as long, and are frozen in steps as they come.
"""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..exec.pipeline import Pipeline

GENERATIONS = 3
FREEZE_EVERY_ENTRIES = 1000
"""Table entries added at run time (P4Runtime INSERTs) after which the survivors are frozen too:
100k entries unfrozen made each full collection walk ~700k objects, 300 ms with the packet loop
stopped (`lgkit bench-tables`); frozen every 1000, a full collection walks a few thousand."""
LONG_PAUSE_NS = 1_000_000
"A collection at least this long is counted as a long pause."


@dataclass
class Pauses:
    """The collections of one generation and how long they stopped the process."""

    count: int = 0
    long: int = 0
    total_ns: int = 0
    longest_ns: int = 0


class Collector:
    """Freezes what each program load leaves (Switch.on_pipeline_change) and times each later
    collection of the garbage collector (gc.callbacks), per generation."""

    def __init__(self) -> None:
        self.generations = [Pauses() for _ in range(GENERATIONS)]
        self._started_ns = 0
        self._unfrozen_entries = 0

    def start(self) -> None:
        if self._on_collection not in gc.callbacks:
            gc.callbacks.append(self._on_collection)

    def stop(self) -> None:
        if self._on_collection in gc.callbacks:
            gc.callbacks.remove(self._on_collection)

    def on_pipeline_change(self, _pipeline: Pipeline | None) -> None:
        """Collect everything (a replaced program's objects too), freeze the survivors, and
        time collections afresh from here."""
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self.generations = [Pauses() for _ in range(GENERATIONS)]

    def on_entries_added(self, count: int) -> None:
        """Table entries were added: every FREEZE_EVERY_ENTRIES, collect what is not frozen
        (garbage goes; a deleted entry, acyclic, is freed by its reference count even when
        frozen) and freeze the survivors, so full collections stop walking the table."""
        self._unfrozen_entries += count
        if self._unfrozen_entries >= FREEZE_EVERY_ENTRIES:
            self._unfrozen_entries = 0
            gc.collect()
            gc.freeze()

    def _on_collection(self, phase: str, info: dict[str, Any]) -> None:
        now = time.perf_counter_ns()
        if phase == "start":
            self._started_ns = now
            return
        pauses = self.generations[info["generation"]]
        pause = now - self._started_ns
        pauses.count += 1
        pauses.long += pause >= LONG_PAUSE_NS
        pauses.total_ns += pause
        pauses.longest_ns = max(pauses.longest_ns, pause)

    def summary(self) -> str:
        """One line: per generation the collections since the last program load, how many took
        1 ms or more, the longest; and how many objects are frozen."""
        parts = [f"gen{g} {p.count} ({p.long} >= 1 ms, longest {p.longest_ns / 1e6:.2f} ms)"
                 for g, p in enumerate(self.generations)]
        return (f"garbage collections since the program load: {', '.join(parts)}; "
                f"{gc.get_freeze_count()} objects frozen")
