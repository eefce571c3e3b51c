"""Switch clocks: real time for ports, virtual (discrete-event) time for simulated networks."""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable
from typing import Any

Callback = Callable[..., Any]


class Clock:
    """A time source (integer nanoseconds since start) with one-shot timers."""

    def __init__(self) -> None:
        self._timers: list[tuple[int, int, Callback, tuple[Any, ...]]] = []
        self._seq = itertools.count()

    def now_ns(self) -> int:
        raise NotImplementedError

    def call_at(self, t_ns: int, fn: Callback, *args: Any) -> None:
        """Run `fn(*args)` at time `t_ns` (or as soon as possible after it)."""
        heapq.heappush(self._timers, (t_ns, next(self._seq), fn, args))

    def call_later(self, delay_ns: int, fn: Callback, *args: Any) -> None:
        self.call_at(self.now_ns() + delay_ns, fn, *args)

    def next_timer_ns(self) -> int | None:
        """Time of the earliest pending timer, or None."""
        return self._timers[0][0] if self._timers else None


class RealClock(Clock):
    """Wall-clock time (monotonic). Timers run when the owner's event loop calls `run_due`.

    A timer added from another thread calls `wakeup` (set by the event loop) so that a sleeping
    loop notices it.
    """

    def __init__(self) -> None:
        super().__init__()
        self._start = time.monotonic_ns()
        self._lock = threading.Lock()
        self.wakeup: Callable[[], None] | None = None
        self.loop_thread: int | None = None

    def now_ns(self) -> int:
        return time.monotonic_ns() - self._start

    def call_at(self, t_ns: int, fn: Callback, *args: Any) -> None:
        with self._lock:
            super().call_at(t_ns, fn, *args)
        if self.wakeup is not None and threading.get_ident() != self.loop_thread:
            self.wakeup()

    def run_due(self) -> int:
        """Run the timers that are due now and were added before this call; return the count.

        Timers added while running wait for the next call, so a timer that re-arms itself for
        "now" cannot starve the event loop.
        """
        now = self.now_ns()
        with self._lock:
            cutoff = next(self._seq)
        count = 0
        timers = self._timers
        while timers and timers[0][0] <= now and timers[0][1] < cutoff:
            with self._lock:
                _, _, fn, args = heapq.heappop(timers)
            fn(*args)
            count += 1
        return count

    def seconds_to_next(self, cap_s: float) -> float:
        """How long the event loop may sleep before the next timer is due (at most `cap_s`)."""
        nxt = self.next_timer_ns()
        if nxt is None:
            return cap_s
        return min(cap_s, max(0.0, (nxt - self.now_ns()) / 1e9))


class VirtualClock(Clock):
    """Discrete-event time: `run_until` jumps from timer to timer, in (time, insertion) order."""

    def __init__(self) -> None:
        super().__init__()
        self._now = 0
        self.events_run = 0

    def now_ns(self) -> int:
        return self._now

    def call_at(self, t_ns: int, fn: Callback, *args: Any) -> None:
        if t_ns < self._now:
            raise ValueError(f"cannot schedule in the past: {t_ns} < now {self._now}")
        heapq.heappush(self._timers, (t_ns, next(self._seq), fn, args))

    def run_until(self, t_ns: int | None = None) -> None:
        """Run every event up to and including time `t_ns` (all events if None); time ends at
        `t_ns` (or at the last event)."""
        timers = self._timers
        pop = heapq.heappop
        count = 0
        while timers and (t_ns is None or timers[0][0] <= t_ns):
            t, _, fn, args = pop(timers)
            self._now = t
            fn(*args)
            count += 1
        self.events_run += count
        if t_ns is not None and t_ns > self._now:
            self._now = t_ns
