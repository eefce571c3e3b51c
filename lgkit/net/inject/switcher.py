"""Gilbert-Elliott in time, for injectors that can only set a drop rate."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable

from lgkit.sw.switch.loss import LossModel

MIN_SOJOURN_S = 0.02
"Shortest mean state duration an injector that switches by control-plane writes can follow."


class StateSwitcher:
    """Gilbert-Elliott in time for injectors that can only set a drop rate: a thread that
    alternates the rate between 0 (good) and bad_loss (bad), with exponential sojourns whose
    means are mean_burst frames (bad) and the matching good period, at `frames_per_s`.

    Each switch is a control-plane write (an nft transaction, a register write) that takes
    milliseconds, so when the bad period would be shorter than MIN_SOJOURN_S both means are
    stretched by the same factor: the mean loss rate stays, bursts get longer.
    """

    def __init__(self, model: LossModel, apply: Callable[[float], None],
                 frames_per_s: float, seed: int | None = None) -> None:
        self.model, self.apply = model, apply
        mean_bad_s = model.mean_burst / frames_per_s
        self.stretch = max(1.0, MIN_SOJOURN_S / mean_bad_s)
        self.mean_bad_s = mean_bad_s * self.stretch
        self.mean_good_s = self.mean_bad_s * (1.0 - model.bad_share) / model.bad_share
        self._random = random.Random(seed)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def describe(self) -> str:
        """How the model is realised in time."""
        text = f"bad {self.mean_bad_s * 1e3:.1f} ms / good {self.mean_good_s * 1e3:.1f} ms"
        if self.stretch > 1.0:
            text += f" (bursts stretched x{self.stretch:.1f} to follow in time)"
        return text

    def start(self) -> None:
        """Begin alternating (again, after a stop)."""
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, daemon=True, name="ge-switcher")
        self._thread.start()

    def _run(self) -> None:
        bad = False
        while not self._stop.is_set():
            began = time.monotonic()
            self.apply(self.model.bad_loss if bad else 0.0)
            mean = self.mean_bad_s if bad else self.mean_good_s
            spent = time.monotonic() - began
            self._stop.wait(max(0.0, self._random.expovariate(1.0 / mean) - spent))
            bad = not bad

    def stop(self) -> None:
        """Stop alternating (the last rate stays until the injector removes it)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2.0)
            self._thread = None
