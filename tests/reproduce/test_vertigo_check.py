"""The headline check of `lgkit reproduce vertigo` counts failed queries: a scheme that
completes few queries does not get a low tail QCT from the few."""

from __future__ import annotations

import math

import numpy as np

from lgkit.reproduce.vertigo import _p99_all


def result(completed_ms: list[float], failed: int) -> dict:
    return {"qct": np.array(completed_ms) * 1000, "net": {"queries_failed": failed}}


def test_failed_queries_count_as_longer_than_any() -> None:
    assert _p99_all(result(list(range(1, 101)), 0)) == 100.0
    assert _p99_all(result([500.0] * 12, 266)) == math.inf  # 12 of 278 done: no tail to show
    assert _p99_all(result([500.0] * 367 + [12_000.0], 2)) == 500.0  # 2 of 370 failed: < 1%
    assert math.isnan(_p99_all(result([], 0)))
