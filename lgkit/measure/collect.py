"""Collectors: sample counters at an interval into a results table while a phase runs."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Self

from lgkit.measure.loss import PointCounts
from lgkit.measure.results import RunStore


class Periodic:
    """Calls `_sample()` at the start, every interval in a thread, and at the end of a `with`
    block (a crash keeps every row written so far)."""

    def __init__(self, interval_s: float, name: str) -> None:
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name=name)
        self._start = time.monotonic()

    def _sample(self) -> None:
        raise NotImplementedError

    def elapsed_s(self) -> float:
        return round(time.monotonic() - self._start, 3)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._sample()

    def __enter__(self) -> Self:
        self._start = time.monotonic()
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(self.interval_s + 10.0)
        self._sample()


class CounterSampler(Periodic):
    """Appends the A-D counters to the run's `counters` table every interval."""

    def __init__(self, store: RunStore, phase: str, read: Callable[[], PointCounts],
                 interval_s: float = 0.5) -> None:
        super().__init__(interval_s, "sampler")
        self.store, self.phase, self.read = store, phase, read

    def _sample(self) -> None:
        row = {"phase": self.phase, "t_s": self.elapsed_s()}
        self.store.append("counters", row | asdict(self.read()))
