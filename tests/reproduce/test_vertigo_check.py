"""The headline check of `lgkit reproduce vertigo` counts failed queries: a scheme that
completes few queries does not get a low tail QCT from the few."""

from __future__ import annotations

import math

import numpy as np

from lgkit.reproduce.vertigo import _checks, _p99_all


def result(completed_ms: list[float], failed: int) -> dict:
    return {"qct": np.array(completed_ms) * 1000, "net": {"queries_failed": failed}}


def test_failed_queries_count_as_longer_than_any() -> None:
    assert _p99_all(result(list(range(1, 101)), 0)) == 100.0
    assert _p99_all(result([500.0] * 12, 266)) == math.inf  # 12 of 278 done: no tail to show
    assert _p99_all(result([500.0] * 367 + [12_000.0], 2)) == 500.0  # 2 of 370 failed: < 1%
    assert math.isnan(_p99_all(result([], 0)))


def scheme(completed_ms: list[float], failed: int) -> dict:
    return {"qct": np.array(completed_ms) * 1000,
            "net": {"queries_failed": failed, "queries_ok": len(completed_ms)}}


def test_vertigo_must_beat_ecmp_and_drill_tails_and_complete_as_many_queries() -> None:
    results = {"ecmp": scheme([1.0] * 99 + [9.0], 0), "drill": scheme([1.0] * 99 + [7.0], 0),
               "vertigo": scheme([1.0] * 99 + [8.0], 0)}
    assert [c.passed for c in _checks(results)] == [True, False, True]
    assert "vertigo 8 ms (95% bounds 1 to beyond the sample) vs drill 7 ms" in \
        _checks(results)[1].text  # 100 queries cannot place a p99's upper bound
    results["vertigo"] = scheme([1.0] * 98, 0)  # a lower tail, fewer queries done
    assert [c.passed for c in _checks(results)] == [True, True, False]


def test_the_tail_check_prints_bounds_and_whether_they_are_apart() -> None:
    fast = [1.0] * 985 + [2.0] * 15
    results = {"ecmp": scheme([1.0] * 950 + [9.0] * 50, 0), "vertigo": scheme(fast, 0)}
    tail_check = _checks(results)[0]
    assert tail_check.passed and "vertigo 2 ms (95% bounds 1 to 2)" in tail_check.text
    assert "ecmp 9 ms (95% bounds 9 to 9)" in tail_check.text and "bounds apart" in tail_check.text
    results["ecmp"] = scheme([1.0] * 985 + [3.0] * 15, 0)  # p99 3 ms, its lower bound 1 ms
    assert "bounds not apart" in _checks(results)[0].text
