"""Fabric simulation end to end on tiny fabrics: policies, LinkGuardian variants, metrics."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_fabric_paths import enumerate_paths

from lgkit.fabric import runs
from lgkit.fabric.corropt import min_paths_for
from lgkit.fabric.lgperf import DEFAULT_TABLE, LgPerformance
from lgkit.fabric.metrics import row_weights, weighted_cdf, weighted_quantile
from lgkit.fabric.runs import RunSpec
from lgkit.fabric.simulate import (
    BEFORE_ISSUE_15,
    HEALTHY_LOSS,
    FabricSimulation,
    ModelChoices,
    Policy,
)
from lgkit.fabric.topology import facebook_fabric, fat_tree
from lgkit.fabric.trace import TraceParams, generate_trace

FABRIC = facebook_fabric(pods=6, tors_per_pod=8, planes=4, spines_per_plane=8)
# A short MTTF makes a 60-day trace on a 6-pod fabric busy enough to bind the constraint.
PARAMS = TraceParams(seed=2, days=60, mttf_hours=800.0)


@pytest.fixture(scope="module")
def lg() -> LgPerformance:
    return LgPerformance.load(DEFAULT_TABLE)


@pytest.fixture(scope="module")
def trace():
    return generate_trace(FABRIC.n_links, PARAMS)


def simulate(trace, policy: Policy, constraint: float, lg=None, deploys=(),
             choices: ModelChoices | None = None):
    simulation = FabricSimulation(FABRIC, trace, policy, constraint, lg, deploys,
                                  choices or ModelChoices())
    return simulation, simulation.run()


def test_lg_table_picks_the_nearest_row_in_log_scale(lg: LgPerformance) -> None:
    loss, share = lg.lookup(np.array([1e-8, 1e-4, 1e-3, 5e-2]))
    assert loss.tolist() == [5.97e-10, 7.56e-9, 1.29e-9, 1e-8]
    assert share.tolist() == pytest.approx([0.9876, 0.9874, 0.9088, 0.60])


def test_lg_table_rejects_bad_files(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("actual_loss_rate,effective_loss_rate\n1e-3,1e-9\n")
    with pytest.raises(ValueError, match="columns"):
        LgPerformance.load(bad)
    with pytest.raises(ValueError, match="not found"):
        LgPerformance.load(tmp_path / "missing.csv")


@pytest.mark.parametrize("constraint", [0.5, 0.75])
def test_corropt_keeps_the_constraint_and_counts_stay_exact(trace, lg, constraint) -> None:
    simulation, series = simulate(trace, Policy.CORROPT, constraint, lg, (1.0,))
    min_share = min_paths_for(constraint, FABRIC.max_paths) / FABRIC.max_paths
    assert series.least_paths.min() >= min_share
    assert series.n_disabled.max() > 0
    assert np.array_equal(simulation.paths.tor_paths,
                          enumerate_paths(FABRIC, simulation.paths.enabled))
    open_links = [link for pod in simulation.corrupting for link in pod]
    expected = sum(simulation.link_penalty[link, 0]
                   for link in open_links)
    healthy = FABRIC.n_links - len(open_links) - series.n_disabled[-1]
    assert series.penalty[-1, 0] == pytest.approx(expected + healthy * HEALTHY_LOSS, rel=1e-12)


def test_the_75_percent_constraint_binds_harder(trace, lg) -> None:
    _, loose = simulate(trace, Policy.CORROPT, 0.5, lg, (1.0,))
    _, tight = simulate(trace, Policy.CORROPT, 0.75, lg, (1.0,))
    assert tight.n_corrupting.max() > loose.n_corrupting.max()
    assert tight.penalty[:, 0].mean() > loose.penalty[:, 0].mean()


def test_linkguardian_lowers_penalty_and_capacity_without_changing_decisions(trace, lg) -> None:
    _, alone = simulate(trace, Policy.CORROPT, 0.75)
    _, with_lg = simulate(trace, Policy.CORROPT, 0.75, lg, (0.5, 1.0))
    assert np.array_equal(alone.n_disabled, with_lg.n_disabled)
    assert np.allclose(alone.penalty[:, 0], with_lg.penalty[:, 0], rtol=1e-12, atol=0)
    full, half = with_lg.penalty[:, 2], with_lg.penalty[:, 1]
    assert np.all(full <= half * (1 + 1e-12)) and np.all(half <= alone.penalty[:, 0] * (1 + 1e-12))
    assert (alone.penalty[:, 0] / full).max() > 1e4
    assert np.all(with_lg.least_capacity[:, 2] <= with_lg.least_capacity[:, 0])


def test_baseline_policies(trace) -> None:
    _, nothing = simulate(trace, Policy.NOTHING, 0.75)
    _, disable = simulate(trace, Policy.DISABLE, 0.75)
    _, strict = simulate(trace, Policy.CORROPT, 1.0)  # no link can ever go down
    assert nothing.n_disabled.max() == 0 and nothing.least_paths.min() == 1.0
    # A new onset on a corrupting link replaces its loss rate: the last onset of each link counts.
    inside = trace.time_h < PARAMS.horizon_hours
    last_loss = dict(zip(trace.link[inside].tolist(), trace.loss[inside].tolist(), strict=True))
    healthy = FABRIC.n_links - len(last_loss)
    assert nothing.penalty[-1, 0] == pytest.approx(sum(last_loss.values()) + healthy * HEALTHY_LOSS,
                                                   rel=1e-12)
    assert np.all(np.diff(nothing.n_corrupting) >= 0) and nothing.n_corrupting[-1] == len(last_loss)
    _, ignoring = simulate(trace, Policy.NOTHING, 0.75, choices=ModelChoices(refailure="ignore"))
    assert np.all(np.diff(ignoring.penalty[:, 0]) > 0)
    assert disable.n_corrupting.max() == 0
    assert disable.least_paths.min() < 0.75  # disabling everything breaks the constraint
    assert np.array_equal(strict.penalty, nothing.penalty)


def test_fat_tree_runs(lg) -> None:
    fabric = fat_tree(8)
    trace = generate_trace(fabric.n_links, TraceParams(seed=1, days=90, mttf_hours=500.0))
    series = FabricSimulation(fabric, trace, Policy.CORROPT, 0.75, lg, (1.0,)).run()
    assert series.least_paths.min() >= 0.75
    assert series.n_disabled.max() > 0


def test_run_is_deterministic_and_survives_save_and_load(tmp_path: Path) -> None:
    spec = RunSpec(FABRIC, 0.75, PARAMS, deploys=(1.0,))
    first, second = runs.execute(spec), runs.execute(spec)
    for policy in spec.policies:
        assert np.array_equal(first.series[policy].penalty, second.series[policy].penalty)
    loaded = runs.load(runs.save(first, tmp_path))
    assert loaded.spec == spec
    assert np.array_equal(loaded.series[Policy.CORROPT].least_capacity,
                          first.series[Policy.CORROPT].least_capacity)
    assert loaded.comparisons() == first.comparisons()
    assert runs.find_runs(tmp_path) == [tmp_path / spec.name]


def test_replaying_a_saved_trace_gives_the_same_run(tmp_path: Path) -> None:
    spec = RunSpec(FABRIC, 0.5, PARAMS, policies=(Policy.CORROPT,))
    generate_trace(FABRIC.n_links, PARAMS).save(tmp_path / "t.npz")
    replayed = runs.execute(RunSpec(FABRIC, 0.5, TraceParams(seed=99), policies=(Policy.CORROPT,),
                                    trace_file=str(tmp_path / "t.npz")))
    assert np.array_equal(runs.execute(spec).series[Policy.CORROPT].penalty,
                          replayed.series[Policy.CORROPT].penalty)
    with pytest.raises(ValueError, match="links"):
        runs.execute(RunSpec(fat_tree(4), 0.5, PARAMS, trace_file=str(tmp_path / "t.npz")))


def test_time_weights_and_weighted_cdf() -> None:
    times = np.array([0.0, 10.0, 30.0, 40.0])
    assert row_weights(times, 5.0, 35.0).tolist() == [5.0, 20.0, 5.0, 0.0]
    values = np.array([3.0, 1.0, 2.0, 9.0])
    sorted_values, shares = weighted_cdf(values, row_weights(times, 5.0, 35.0))
    assert sorted_values.tolist() == [1.0, 2.0, 3.0]
    assert shares.tolist() == pytest.approx([20 / 30, 25 / 30, 1.0])
    assert weighted_quantile(values, row_weights(times, 5.0, 35.0), 0.5) == 1.0


def test_the_earlier_rules_reproduce_the_earlier_numbers() -> None:
    """log10 lookup, ignored re-failures, trace repair times: the outputs of lgkit at f9df398."""
    spec = RunSpec(FABRIC, 0.75, PARAMS, deploys=(0.5, 1.0), choices=BEFORE_ISSUE_15)
    series = runs.execute(spec).series
    earlier = {  # rows, mean total penalty without LG and with LG on every link (f9df398)
        Policy.CORROPT: (1298, 0.020811009786533247, 7.742495256559707e-08),
        Policy.DISABLE: (1431, 3.5616841369671557e-16, 3.5616841369671557e-16),
        Policy.NOTHING: (337, 0.15888898645494962, 5.053514067441897e-07),
    }
    for policy, (rows, penalty, penalty_lg) in earlier.items():
        assert len(series[policy].time_h) == rows
        assert series[policy].penalty[:, 0].mean() == pytest.approx(penalty, rel=1e-12)
        assert series[policy].penalty[:, 2].mean() == pytest.approx(penalty_lg, rel=1e-12)
    now = runs.execute(RunSpec(FABRIC, 0.75, PARAMS, deploys=(0.5, 1.0))).series
    assert now[Policy.NOTHING].penalty[:, 0].mean() != pytest.approx(earlier[Policy.NOTHING][1])


@pytest.mark.parametrize("constraint", [0.5, 0.75])
def test_their_repair_rule_keeps_the_constraint_with_whole_distinct_seconds(trace, lg,
                                                                           constraint) -> None:
    choices = ModelChoices(repair_draws="artifact")
    simulation, series = simulate(trace, Policy.CORROPT, constraint, lg, (1.0,), choices)
    min_share = min_paths_for(constraint, FABRIC.max_paths) / FABRIC.max_paths
    assert series.least_paths.min() >= min_share
    assert np.array_equal(simulation.paths.tor_paths,
                          enumerate_paths(FABRIC, simulation.paths.enabled))
    seconds = np.round(series.time_h * 3600)
    assert np.abs(series.time_h * 3600 - seconds).max() < 1e-6 and np.all(np.diff(seconds) > 0)
    _, trace_rule = simulate(trace, Policy.CORROPT, constraint, lg, (1.0,))
    assert series.penalty[:, 0].mean() != pytest.approx(trace_rule.penalty[:, 0].mean())
