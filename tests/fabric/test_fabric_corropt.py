"""CorrOpt's fast checker and optimizer on constructed cases and against brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from lgkit.fabric.corropt import fast_check, min_paths_for, optimize_pod
from lgkit.fabric.paths import PathState
from lgkit.fabric.topology import facebook_fabric

# One pod, 4 ToRs, 4 planes x 4 spines: 16 paths per ToR; a 75% constraint keeps 12.
FABRIC = facebook_fabric(1, 4, 4, 4)
MIN_75 = 12


def test_min_paths_rounds_up_and_rejects_bad_constraints() -> None:
    assert min_paths_for(0.5, 192) == 96
    assert min_paths_for(0.75, 192) == 144
    assert min_paths_for(0.7, 10) == 7
    assert min_paths_for(0.71, 10) == 8
    for bad in (0.0, -0.1, 1.5):
        with pytest.raises(ValueError):
            min_paths_for(bad, 192)


def test_fast_checker_decisions() -> None:
    state = PathState(FABRIC)
    assert fast_check(state, FABRIC.tor_link(0, 0, 0), MIN_75)  # ToR 0: 16 -> 12, allowed
    state.disable(FABRIC.tor_link(0, 0, 0))
    # ToR 0 is at the minimum: any spine link of planes 1..3 would take it to 11.
    assert not fast_check(state, FABRIC.agg_link(0, 1, 0), MIN_75)
    assert not fast_check(state, FABRIC.tor_link(0, 0, 1), MIN_75)
    # Plane 0 no longer serves ToR 0; the other ToRs drop 16 -> 15.
    assert fast_check(state, FABRIC.agg_link(0, 0, 3), MIN_75)
    # Another ToR can still lose one uplink.
    assert fast_check(state, FABRIC.tor_link(0, 2, 3), MIN_75)


def test_optimizer_prefers_the_larger_feasible_loss_not_the_largest_link() -> None:
    state = PathState(FABRIC)
    big = FABRIC.tor_link(0, 0, 0)  # alone: ToR 0 -> 12
    left = FABRIC.agg_link(0, 1, 0)  # with `big`: ToR 0 -> 11, infeasible
    right = FABRIC.agg_link(0, 2, 0)  # with `big`: infeasible; with `left`: all ToRs -> 14
    chosen = optimize_pod(state, 0, {big: 1e-3, left: 6e-4, right: 6e-4}, MIN_75)
    assert chosen.links == sorted([left, right])
    assert chosen.free == [] and sorted(chosen.singles) == sorted([big, left, right])
    chosen = optimize_pod(state, 0, {big: 2e-3, left: 6e-4, right: 6e-4}, MIN_75)
    assert chosen.links == [big]


def test_optimizer_takes_everything_when_the_constraint_allows() -> None:
    state = PathState(FABRIC)
    links = {FABRIC.agg_link(0, 0, 0): 1e-5, FABRIC.agg_link(0, 0, 1): 1e-4}
    assert optimize_pod(state, 0, links, MIN_75).free == list(links)
    assert optimize_pod(state, 0, links, MIN_75).links == sorted(links)
    assert optimize_pod(state, 0, {}, MIN_75).links == []


def test_optimizer_keeps_links_that_no_set_can_disable() -> None:
    state = PathState(FABRIC)
    state.disable(FABRIC.tor_link(0, 3, 0))  # ToR 3 sits at 12
    blocked = FABRIC.agg_link(0, 1, 1)  # would take ToR 3 to 11
    assert optimize_pod(state, 0, {blocked: 1e-2}, MIN_75).links == []


@pytest.mark.parametrize("seed", range(12))
def test_optimizer_is_exact_against_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    fabric = facebook_fabric(1, 4, 3, 3)  # 9 paths per ToR
    min_paths = 6
    state = PathState(fabric)
    for link in rng.permutation(fabric.n_links)[:3]:
        if state.keeps_minimum(int(link), min_paths):
            state.disable(int(link))
    enabled = np.flatnonzero(state.enabled)
    candidates = {int(link): float(rng.uniform(1e-6, 1e-2))
                  for link in rng.choice(enabled, size=7, replace=False)}
    chosen = optimize_pod(state, 0, candidates, min_paths).links
    assert state.pod_paths_without(0, chosen).min() >= min_paths
    best = max(
        sum(candidates[link] for link in subset)
        for size in range(len(candidates) + 1)
        for subset in itertools.combinations(candidates, size)
        if state.pod_paths_without(0, subset).min() >= min_paths
    )
    assert sum(candidates[link] for link in chosen) == pytest.approx(best, rel=1e-12)
