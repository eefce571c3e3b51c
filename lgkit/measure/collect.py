"""Collectors: sample counters at an interval into a results table while a phase runs."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import asdict

from lgkit.measure.loss import PointCounts
from lgkit.measure.results import RunStore


class CounterSampler:
    """Appends the A-D counters to the run's `counters` table every interval (a crash keeps
    every row written so far)."""

    def __init__(self, store: RunStore, phase: str, read: Callable[[], PointCounts],
                 interval_s: float = 0.5) -> None:
        self.store, self.phase, self.read, self.interval_s = store, phase, read, interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="sampler")
        self._start = time.monotonic()

    def _sample(self) -> None:
        row = {"phase": self.phase, "t_s": round(time.monotonic() - self._start, 3)}
        self.store.append("counters", row | asdict(self.read()))

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._sample()

    def __enter__(self) -> CounterSampler:
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(self.interval_s + 1.0)
        self._sample()
