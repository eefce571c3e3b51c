"""The paper's metrics (brief §6) from measured series: loss, link speed, buffers, FCT tails."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from lgkit.measure.loss import PointCounts

TAIL_QUANTILES = (0.99, 0.999, 0.9999, 0.99999)
"The paper's 'top 1%' percentiles."


@dataclass(frozen=True)
class Estimate:
    """A percentile of a sample with a distribution-free confidence interval (NaN where the
    sample is too small to bound it)."""

    q: float
    value: float
    low: float
    high: float
    n: int
    confidence: float = 0.95

    @property
    def label(self) -> str:
        """p99, p99.9, ... as the paper writes them."""
        return percentile_label(self.q)


def percentile_label(q: float) -> str:
    """0.999 -> 'p99.9'."""
    return "p" + f"{q * 100:.5f}".rstrip("0").rstrip(".")


def quantile_ci(values: Sequence[float] | np.ndarray, q: float,
                confidence: float = 0.95) -> Estimate:
    """The q-quantile (linear interpolation, as numpy and pandas) with an exact binomial
    confidence interval on order statistics: [x_(l), x_(u)] such that
    P(l <= K < u) >= confidence for K ~ Binomial(n, q), the count of samples below the true
    quantile. A bound that would need a sample beyond the smallest or largest is NaN."""
    x = np.sort(np.asarray(values, dtype=float))
    n = len(x)
    if n == 0:
        return Estimate(q, math.nan, math.nan, math.nan, 0, confidence)
    value = float(np.quantile(x, q))
    cdf = binomial_cdf(n, q)  # cdf[k] = P(K <= k)
    alpha = 1.0 - confidence
    # l: the largest l >= 1 with P(K <= l - 1) <= alpha/2; u: the smallest u with
    # P(K <= u - 1) >= 1 - alpha/2 (1-based order statistics).
    lows = np.nonzero(cdf[: n] <= alpha / 2)[0]
    l_index = int(lows[-1]) + 1 if len(lows) else 0
    highs = np.nonzero(cdf >= 1 - alpha / 2)[0]
    u_index = int(highs[0]) + 1 if len(highs) else n + 1
    low = float(x[l_index - 1]) if l_index >= 1 else math.nan
    high = float(x[u_index - 1]) if u_index <= n else math.nan
    return Estimate(q, value, low, high, n, confidence)


def binomial_cdf(n: int, p: float) -> np.ndarray:
    """P(K <= k) for k = 0..n, K ~ Binomial(n, p), computed in log space."""
    k = np.arange(n + 1)
    log_fact = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, n + 1)))])
    with np.errstate(divide="ignore"):
        log_pmf = (log_fact[n] - log_fact[k] - log_fact[n - k]
                   + k * np.log(p) + (n - k) * np.log1p(-p))
    return np.minimum(np.cumsum(np.exp(log_pmf)), 1.0)


def fewer_by_chance(events: int, trials: int, other_events: int, other_trials: int) -> float:
    """One-sided Fisher exact test: the probability that a group of `trials` drawn from both
    groups together holds `events` or fewer of all their events (small: the group really has
    fewer events than the other)."""
    total, drawn = trials + other_trials, events + other_events
    ways = sum(math.comb(drawn, k) * math.comb(total - drawn, trials - k)
               for k in range(min(events, trials) + 1))
    return ways / math.comb(total, trials)


def tail(values: Sequence[float] | np.ndarray, quantiles: Iterable[float] = TAIL_QUANTILES,
         confidence: float = 0.95) -> list[Estimate]:
    """The tail percentiles of a sample (FCTs), each with its confidence interval."""
    return [quantile_ci(values, q, confidence) for q in quantiles]


def effective_loss(before: PointCounts, after: PointCounts) -> float:
    """Protected packets that never left the receiver, over those that entered the sender
    (A and D of Fig. 7) between two counter readings."""
    return (after - before).effective_loss


def actual_loss(before: PointCounts, after: PointCounts) -> float:
    """Frames lost on the link, (B - C) / B, between two counter readings."""
    return (after - before).actual_loss


def effective_link_speed(goodput_mbps: float, link_mbps: float) -> float:
    """Line-rate goodput through the protected link as a share of the link rate."""
    return goodput_mbps / link_mbps if link_mbps > 0 else math.nan


def rates(times_s: Sequence[float], totals: Sequence[float]) -> np.ndarray:
    """Per-interval rate of a cumulative counter: (total[i] - total[i-1]) / (t[i] - t[i-1]),
    one value per interval (len - 1 values)."""
    t = np.asarray(times_s, dtype=float)
    v = np.asarray(totals, dtype=float)
    dt = np.diff(t)
    return np.divide(np.diff(v), dt, out=np.full(len(dt), np.nan), where=dt > 0)


@dataclass(frozen=True)
class Occupancy:
    """Buffer occupancy over a run (bytes)."""

    max: float
    p50: float
    p99: float
    mean: float
    samples: int


def occupancy(samples: Sequence[float] | np.ndarray) -> Occupancy:
    """Max, median, p99 and mean of occupancy samples."""
    x = np.asarray(samples, dtype=float)
    if len(x) == 0:
        return Occupancy(math.nan, math.nan, math.nan, math.nan, 0)
    return Occupancy(float(x.max()), float(np.quantile(x, 0.5)), float(np.quantile(x, 0.99)),
                     float(x.mean()), len(x))
