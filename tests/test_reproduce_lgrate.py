"""`lgkit reproduce lgrate`: the pass rule and the rate search (no network needed)."""

from __future__ import annotations

import pytest

from lgkit.reproduce import registry
from lgkit.reproduce.lgrate import search, summary, verdict


def test_lgrate_is_registered_as_a_testbed_experiment() -> None:
    entry = registry.lookup("lgrate")
    assert entry.network and entry.module == "lgkit.reproduce.lgrate"


@pytest.mark.parametrize(("clean", "lg", "effective", "why"), [
    (95.0, 90.0, 0.0, ""),
    (95.0, 90.0, 1e-4, "effective loss 1.0e-04 > 0"),
    (80.0, 80.0, 0.0, "no-loss flow 80.0 < 90% of 95.0"),
    (95.0, 90.0, 2e-4, "effective loss 2.0e-04 > 0"),
    (95.0, 85.0, 0.0, "LG goodput 85.0 < 90% of 95.0"),
])
def test_verdict_names_the_condition_that_failed(clean: float, lg: float, effective: float,
                                                 why: str) -> None:
    assert verdict(100.0, clean, lg, effective) == (why == "", why)


def probe_below(limit: float, tried: list[float]):
    def passes(rate: float) -> bool:
        tried.append(rate)
        return rate <= limit
    return passes


def test_search_climbs_then_bisects_to_the_resolution() -> None:
    tried: list[float] = []
    best = search(probe_below(130.0, tried), start=10, factor=2, ceiling=1000, resolution=0.1,
                  floor=1)
    assert tried[:5] == [10, 20, 40, 80, 160]
    assert best is not None and best <= 130 and 160 / best > 1 and best / 130 > 1 / 1.1 ** 2
    assert all(r <= 130 for r in tried if r != 160 and r <= best)


def test_search_descends_when_the_start_fails() -> None:
    tried: list[float] = []
    best = search(probe_below(3.0, tried), start=10, factor=2, ceiling=1000, resolution=0.5,
                  floor=1)
    assert tried[:3] == [10, 5, 2.5]
    assert best is not None and 2.5 <= best <= 3.0


def test_search_stops_at_the_ceiling_and_at_the_floor() -> None:
    assert search(lambda rate: True, start=10, factor=2, ceiling=50, resolution=0.1,
                  floor=1) == 50
    assert search(lambda rate: False, start=10, factor=2, ceiling=50, resolution=0.1,
                  floor=1) is None


def test_the_issue_limit_allows_1e_4_effective_loss() -> None:
    assert verdict(100.0, 95.0, 90.0, 1e-4, max_effective=1e-4) == (True, "")
    assert verdict(100.0, 95.0, 90.0, 2e-4, max_effective=1e-4)[0] is False


def test_summary_of_one_and_of_several_searches() -> None:
    assert summary([42.0]) == "42 Mb/s"
    assert summary([None]) == "none"
    assert summary([30.0, None, 45.0]).startswith("0 / 30 / 45 Mb/s (min/median/max of 3")
