"""`lgkit reproduce lgrate`: the pass rule and the rate search (no network needed)."""

from __future__ import annotations

import argparse
import math

import pytest

from lgkit.core.targets import TARGETS
from lgkit.core.topology import load_spec
from lgkit.measure.wirecap import RetxDelays
from lgkit.net.testbed.lgprotection import RECIRC_QUEUE_DEPTH
from lgkit.net.testbed.testbed import Testbed
from lgkit.reproduce import registry
from lgkit.reproduce.bed import NICE
from lgkit.reproduce.lgrate import (
    EXPECTED,
    Probe,
    add_arguments,
    delay_percentiles,
    describe_losses,
    search,
    summary,
    timeout_check,
    try_probe,
    verdict,
)
from lgkit.sw.switch.switch import RECIRC_QUEUE_CAPACITY
from lgkit.workloads.iperf import WorkloadError


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


def probe(rate: float, delay_max_ms: float, timeout_ms: float, passed: bool = True) -> Probe:
    return Probe(rate, 9.0, 9.0, 0.01, 0.0, 0, 30, 0, 5, 5, 100, 100, 0, 0, timeout_ms, 1.0,
                 delay_max_ms, delay_max_ms, "none", "", "", 1.0, passed, "")


def test_delay_percentiles_in_ms() -> None:
    delays = RetxDelays([float(us) for us in range(1000, 101_000, 1000)], 0)
    assert delay_percentiles(delays) == (51.0, 100.0, 100.0)
    assert all(math.isnan(v) for v in delay_percentiles(RetxDelays([], 3)))


def test_timeout_check_names_the_worst_passing_rate() -> None:
    check = timeout_check([probe(10, 120.0, 250.0), probe(20, 200.0, 250.0),
                           probe(40, 900.0, 250.0, passed=False)])
    assert check.passed and "max 200 ms vs 250 ms at 20 Mb/s" in check.text
    assert not timeout_check([probe(10, 300.0, 250.0)]).passed
    assert not timeout_check([probe(10, math.nan, 250.0)]).passed


def test_losses_in_switches_are_named_by_switch_and_cause() -> None:
    lost = {("tx", "queue_full port 2 prio 1"): 41, ("rx", "rx_socket_overflow"): 3}
    assert describe_losses(lost) == "rx rx_socket_overflow: 3; tx queue_full port 2 prio 1: 41"
    assert describe_losses({}) == "none"


def test_drops_outside_p4_leave_out_the_programs_own_and_the_switch_totals(tmp_path) -> None:
    testbed = Testbed(load_spec("fig7"), "builtin", tmp_path)
    before = {("tx", "egress_drop"): 10, ("tx", "queue_full"): 1,
              ("tx", "queue_full port 2 prio 1"): 1}
    after = {("tx", "egress_drop"): 900, ("tx", "ingress_drop"): 5, ("tx", "queue_full"): 42,
             ("tx", "queue_full port 2 prio 1"): 42, ("rx", "rx_socket_overflow"): 3,
             ("dn", "tx_error"): 0}
    testbed.drop_counts = lambda: after  # type: ignore[method-assign]
    assert testbed.drops_outside_p4(before) == {("tx", "queue_full port 2 prio 1"): 41,
                                                ("rx", "rx_socket_overflow"): 3}


def test_builtin_port_queues_hold_what_lgs_hold_or_reordering_buffer_can_release() -> None:
    assert TARGETS["builtin"].queue_depth >= max(RECIRC_QUEUE_CAPACITY, RECIRC_QUEUE_DEPTH)


def test_a_stalled_flow_is_a_failed_probe_and_the_search_goes_on() -> None:
    """A rate whose flow never finishes (iperf3's client times out on a stalled link) fails
    with one line why; the search bisects on and finds the highest rate that passed."""
    tried: list[float] = []
    why: list[str] = []

    def probe_at(rate: float) -> Probe:
        tried.append(rate)
        if rate > 150:
            raise WorkloadError("iperf3 client did not finish")
        return probe(rate, 1.0, 10.0)

    def passes(rate: float) -> bool:
        result = try_probe(probe_at, rate)
        why.append(result.why)
        assert result.rate_mbps == rate and result.passed == (rate <= 150)
        return result.passed

    assert search(passes, 100, 1.5, 1000, 0.1, 1) == 150
    assert tried == [100, 150, 225, 183.7, 166.0, 157.8]
    assert why == ["", "", *["flow failed: iperf3 client did not finish"] * 4]
    assert math.isnan(try_probe(probe_at, 200).lg_mbps)


def test_other_testbed_failures_are_one_line_errors() -> None:
    assert WorkloadError in EXPECTED


def test_the_testbed_runs_at_the_experiments_cpu_priority_by_default() -> None:
    """lgrate measures the rate the experiments use, so its testbed runs at their niceness."""
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert parser.parse_args([]).nice == NICE < 0
    assert parser.parse_args(["--nice", "0"]).nice == 0
