"""Loss models for corruption injection: i.i.d. or Gilbert-Elliott (two-state bursty)."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

MODELS = ("iid", "ge")


@dataclass(frozen=True)
class LossModel:
    """A mean loss rate and how losses cluster.

    Gilbert-Elliott here: no loss in the good state, `bad_loss` in the bad state, bad periods of
    `mean_burst` packets on average; the transition probabilities follow from the mean rate.
    """

    rate: float
    kind: str = "iid"
    bad_loss: float = 0.5
    mean_burst: float = 4.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.rate < 1.0:
            raise ValueError(f"loss rate must be in [0, 1), got {self.rate}")
        if self.kind not in MODELS:
            raise ValueError(f"loss model must be one of {', '.join(MODELS)}, got {self.kind}")
        if self.kind == "ge" and not self.rate < self.bad_loss <= 1.0:
            raise ValueError("Gilbert-Elliott needs rate < bad_loss <= 1")

    @property
    def bad_share(self) -> float:
        """Stationary probability of the bad state."""
        return self.rate / self.bad_loss

    @property
    def p_good_to_bad(self) -> float:
        """Per-packet probability of entering the bad state."""
        pi = self.bad_share
        return self.p_bad_to_good * pi / (1.0 - pi)

    @property
    def p_bad_to_good(self) -> float:
        """Per-packet probability of leaving the bad state."""
        return 1.0 / self.mean_burst

    def describe(self) -> str:
        """Short human description."""
        if self.kind == "iid":
            return f"i.i.d. {self.rate:g}"
        return (f"Gilbert-Elliott mean {self.rate:g} (bad state {self.bad_loss:g} loss, "
                f"mean burst {self.mean_burst:g} pkts)")


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
