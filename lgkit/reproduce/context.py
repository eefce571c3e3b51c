"""What every reproduce experiment gets: scale, target, seed, results, progress and a clock."""

from __future__ import annotations

import argparse
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tqdm import tqdm

from lgkit.measure.results import RunStore

DEFAULT_TIME_LIMIT_S = 600.0
"A default-scale run ends within 10 minutes."
QUICK_TIME_LIMIT_S = 60.0
"A --quick run ends within 1 minute."

Log = Callable[[str], None]


class ReproduceError(RuntimeError):
    """The experiment cannot run, or failed in an expected way; the message is for the user."""


class TimeBoundReached(ReproduceError):
    """The experiment ran out of its time bound (the message says where)."""


@dataclass
class Context:
    """Shared state of one `lgkit reproduce` run, handed to the experiment's `run(ctx)`."""

    name: str
    "The experiment's name (fig9, table3, ...)."
    quick: bool
    "True with --quick: the smallest run that still shows the effect, within a minute."
    target: str
    "builtin or bmv2."
    seed: int
    "Every random choice of the run derives from it (seed_for)."
    time_limit_s: float
    "The run must end within this many seconds of `started`."
    store: RunStore
    "The run's results folder: metadata.json and tidy tables."
    options: argparse.Namespace
    "The command-line options, including the experiment's own (add_arguments)."
    log: Log = print
    started: float = field(default_factory=time.monotonic)

    @property
    def elapsed_s(self) -> float:
        """Seconds since the run started."""
        return time.monotonic() - self.started

    @property
    def remaining_s(self) -> float:
        """Seconds left of the time bound."""
        return self.time_limit_s - self.elapsed_s

    def share_s(self, steps_left: int, reserve_s: float = 0.0) -> float:
        """An even share of the remaining time for the next of `steps_left` steps, keeping
        `reserve_s` back for what follows them (teardown, tables)."""
        return max(0.0, (self.remaining_s - reserve_s) / max(1, steps_left))

    def check_time(self, where: str) -> None:
        """Raise TimeBoundReached if the time bound has passed."""
        if self.remaining_s <= 0:
            raise TimeBoundReached(
                f"{self.name}: time bound of {self.time_limit_s:g} s reached at {where}")

    def seed_for(self, *labels: object) -> int:
        """A seed for one part of the run, stable for a given run seed and labels."""
        text = "/".join(str(x) for x in (self.seed, *labels))
        return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")

    def progress(self, total: float, desc: str, unit: str = "step") -> tqdm:
        """A progress bar on stderr (use as a context manager; update() as work is done)."""
        return tqdm(total=total, desc=f"{self.name}: {desc}", unit=unit, mininterval=0.5,
                    dynamic_ncols=True, leave=False)

    def note(self, **fields: Any) -> None:
        """Record facts about the run in its metadata (scale, rates, settings)."""
        self.store.note(**fields)
