"""Seeded link corruption traces (paper App. D): when each link starts corrupting, how badly,
and how long its repair takes once disabled."""

from __future__ import annotations

import json
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from lgkit.sw.atomic_file import atomic_file

HOURS_PER_DAY = 24.0


@dataclass(frozen=True)
class LossBucket:
    """A loss-rate range of CorrOpt's Table 1 and the share of corrupting links in it."""

    low: float
    high: float
    share: float


CORROPT_BUCKETS: tuple[LossBucket, ...] = (
    LossBucket(1e-8, 9e-6, 0.4723),
    LossBucket(1e-5, 1e-4, 0.1843),
    LossBucket(1e-4, 1e-3, 0.2167),
    LossBucket(1e-3, 1e-2, 0.1267),
)
"""Loss-rate distribution of corrupting links (CorrOpt, SIGCOMM'17, Table 1)."""


@dataclass(frozen=True)
class TraceParams:
    """How a trace is drawn."""

    seed: int = 1
    days: float = 365.0
    """Measured period, after the warm-up."""
    warmup_days: float = 4.0
    """Simulated before the measured period so that repairs are under way when it starts."""
    mttf_hours: float = 10_000.0
    """Mean time to corruption of a healthy link (Weibull, shape 1 = exponential)."""
    short_repair_days: float = 2.0
    long_repair_days: float = 4.0
    short_repair_share: float = 0.8
    """Share of disabled links repaired after `short_repair_days`; the rest take the long time."""

    def __post_init__(self) -> None:
        if self.days <= 0 or self.warmup_days < 0:
            raise ValueError("days must be positive and warmup_days non-negative")
        if self.mttf_hours <= 0:
            raise ValueError("mttf_hours must be positive")
        if not 0.0 <= self.short_repair_share <= 1.0:
            raise ValueError("short_repair_share must be within [0, 1]")

    @property
    def horizon_hours(self) -> float:
        """End of the trace (warm-up plus measured period)."""
        return (self.warmup_days + self.days) * HOURS_PER_DAY


@dataclass
class Trace:
    """Corruption events sorted by time; one row per event."""

    params: TraceParams
    n_links: int
    time_h: np.ndarray
    """Onset time of the corruption (hours)."""
    link: np.ndarray
    """Link id that starts corrupting."""
    loss: np.ndarray
    """Its raw loss rate."""
    repair_h: np.ndarray
    """Repair duration (hours) counted from when the link is disabled."""

    def __len__(self) -> int:
        return len(self.time_h)

    def save(self, path: Path) -> None:
        """Write the trace as a compressed .npz file."""
        meta = json.dumps({"params": asdict(self.params), "n_links": self.n_links})
        with atomic_file(path, binary=True) as file:  # a file: numpy adds no ".npz" to it
            np.savez_compressed(
                file, time_h=self.time_h, link=self.link, loss=self.loss,
                repair_h=self.repair_h, meta=np.array(meta),
            )

    @classmethod
    def load(cls, path: Path) -> Trace:
        """Read a trace written by `save`."""
        try:
            with np.load(path, allow_pickle=False) as data:
                meta = json.loads(str(data["meta"]))
                trace = cls(
                    TraceParams(**meta["params"]), int(meta["n_links"]), data["time_h"],
                    data["link"], data["loss"], data["repair_h"],
                )
        except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile) as error:
            raise ValueError(f"{path}: not an lgkit trace (.npz): {error}") from None
        sizes = {len(trace.time_h), len(trace.link), len(trace.loss), len(trace.repair_h)}
        if len(sizes) != 1 or (len(trace) and not 0 <= trace.link.min() <= trace.link.max()
                               < trace.n_links):
            raise ValueError(f"{path}: inconsistent trace columns")
        return trace


def generate_trace(n_links: int, params: TraceParams) -> Trace:
    """Draw each link's corruption onsets as a Poisson process with mean gap `mttf_hours`.

    The simulator skips an onset on a link in repair (and, if told so, on a corrupting link),
    so by memorylessness the next onset after a repair is again exponential with the same
    MTTF, as App. D prescribes.
    """
    rng = np.random.default_rng(params.seed)
    links, times = _poisson_onsets(rng, n_links, params.mttf_hours, params.horizon_hours)
    order = np.argsort(times, kind="stable")
    links, times = links[order], times[order]
    loss = draw_loss_rates(rng, len(times))
    return Trace(params, n_links, times, links.astype(np.int32), loss,
                 draw_repair_hours(rng, len(times), params))


def _poisson_onsets(
    rng: np.random.Generator, n_links: int, mttf_hours: float, horizon_hours: float
) -> tuple[np.ndarray, np.ndarray]:
    """(link ids, onset times) of every onset before the horizon."""
    links_out: list[np.ndarray] = []
    times_out: list[np.ndarray] = []
    live = np.arange(n_links)
    clock = np.zeros(n_links)
    while live.size:
        clock = clock + rng.exponential(mttf_hours, live.size)
        inside = clock < horizon_hours
        links_out.append(live[inside])
        times_out.append(clock[inside])
        live, clock = live[inside], clock[inside]
    return np.concatenate(links_out), np.concatenate(times_out)


def draw_loss_rates(rng: np.random.Generator, count: int) -> np.ndarray:
    """Loss rates: a CorrOpt bucket by its share, then a uniform value inside it."""
    shares = np.array([bucket.share for bucket in CORROPT_BUCKETS])
    bucket = rng.choice(len(CORROPT_BUCKETS), size=count, p=shares / shares.sum())
    low = np.array([b.low for b in CORROPT_BUCKETS])[bucket]
    high = np.array([b.high for b in CORROPT_BUCKETS])[bucket]
    return low + (high - low) * rng.random(count)


def draw_repair_hours(rng: np.random.Generator, count: int, params: TraceParams) -> np.ndarray:
    """Repair times: `short_repair_days` with probability `short_repair_share`, else long."""
    short = rng.random(count) < params.short_repair_share
    return np.where(short, params.short_repair_days, params.long_repair_days) * HOURS_PER_DAY
