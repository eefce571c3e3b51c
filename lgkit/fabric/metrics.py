"""Time-weighted statistics of a simulated Series: means, CDFs and the CorrOpt vs LG summary."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from lgkit.fabric.simulate import Series


def row_weights(time_h: np.ndarray, start_h: float, end_h: float) -> np.ndarray:
    """Hours each row's state lasts inside [start_h, end_h] (the state holds until the next row)."""
    begin = np.clip(time_h, start_h, end_h)
    finish = np.clip(np.append(time_h[1:], end_h), start_h, end_h)
    return np.maximum(finish - begin, 0.0)


def weighted_cdf(values: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted values, share of time at or below each value)."""
    keep = weights > 0
    order = np.argsort(values[keep], kind="stable")
    sorted_values, sorted_weights = values[keep][order], weights[keep][order]
    cumulative = np.cumsum(sorted_weights)
    return sorted_values, cumulative / cumulative[-1]


def weighted_quantile(values: np.ndarray, weights: np.ndarray, quantile: float) -> float:
    """Smallest value whose time share at or below it reaches `quantile`."""
    sorted_values, shares = weighted_cdf(values, weights)
    return float(sorted_values[np.searchsorted(shares, quantile - 1e-12)])


def penalty_gain(series: Series, variant: int) -> np.ndarray:
    """Per row: the policy's total penalty over the penalty with LinkGuardian variant `variant`."""
    return series.penalty[:, 0] / series.penalty[:, variant]


def capacity_decrease(series: Series, variant: int) -> np.ndarray:
    """Per row: least pod capacity without LG minus with LG variant `variant` (shares)."""
    return series.least_capacity[:, 0] - series.least_capacity[:, variant]


@dataclass(frozen=True)
class Comparison:
    """The policy alone against the policy with LinkGuardian on a share of the links."""

    deploy: float
    mean_penalty: float
    mean_penalty_lg: float
    orders_of_magnitude: float
    """log10 of the ratio of the time-averaged total penalties."""
    median_gain_orders: float
    """log10 of the time-weighted median of the row-by-row penalty gain."""
    share_without_gain: float
    """Share of time with gain 1 (no corrupting link left enabled)."""
    mean_capacity_decrease: float
    max_capacity_decrease: float
    least_paths: float
    least_capacity: float
    least_capacity_lg: float
    max_corrupting: int
    max_disabled: int

    def to_dict(self) -> dict[str, float]:
        """Plain-data form for metadata and summary tables."""
        return asdict(self)


def compare(series: Series, variant: int, start_h: float, end_h: float) -> Comparison:
    """Summarise `series` against its LinkGuardian variant over [start_h, end_h]."""
    weights = row_weights(series.time_h, start_h, end_h)
    active = weights > 0
    total = weights.sum()
    mean_penalty = float(weights @ series.penalty[:, 0] / total)
    mean_penalty_lg = float(weights @ series.penalty[:, variant] / total)
    gain = penalty_gain(series, variant)
    decrease = capacity_decrease(series, variant)
    return Comparison(
        deploy=series.deploys[variant - 1],
        mean_penalty=mean_penalty,
        mean_penalty_lg=mean_penalty_lg,
        orders_of_magnitude=math.log10(mean_penalty / mean_penalty_lg),
        median_gain_orders=math.log10(weighted_quantile(gain, weights, 0.5)),
        share_without_gain=float(weights[gain <= 1.0 + 1e-9].sum() / total),
        mean_capacity_decrease=float(weights @ decrease / total),
        max_capacity_decrease=float(decrease[active].max()),
        least_paths=float(series.least_paths[active].min()),
        least_capacity=float(series.least_capacity[active, 0].min()),
        least_capacity_lg=float(series.least_capacity[active, variant].min()),
        max_corrupting=int(series.n_corrupting[active].max()),
        max_disabled=int(series.n_disabled[active].max()),
    )
