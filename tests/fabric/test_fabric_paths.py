"""Fabric topologies and incremental path counting, checked by hand and by path enumeration."""

from __future__ import annotations

import numpy as np
import pytest

from lgkit.fabric.paths import PathState
from lgkit.fabric.topology import Fabric, facebook_fabric, fat_tree


def enumerate_paths(fabric: Fabric, enabled: np.ndarray) -> np.ndarray:
    """Oracle: count every ToR -> fabric switch -> spine path whose two links are enabled."""
    counts = np.zeros((fabric.pods, fabric.tors_per_pod), dtype=int)
    for pod in range(fabric.pods):
        for tor in range(fabric.tors_per_pod):
            for plane in range(fabric.planes):
                for spine in range(fabric.spines_per_plane):
                    up = enabled[fabric.tor_link(pod, tor, plane)]
                    if up and enabled[fabric.agg_link(pod, plane, spine)]:
                        counts[pod, tor] += 1
    return counts


def test_full_size_fb_fabric_matches_the_paper() -> None:
    fabric = facebook_fabric()
    assert fabric.n_links == 100_224
    assert fabric.max_paths == 192
    assert fabric.pod_capacity_gbps == 19_200


def test_fat_tree_sizes() -> None:
    fabric = fat_tree(4)
    assert (fabric.pods, fabric.tors_per_pod, fabric.planes, fabric.spines_per_plane) == (
        4, 2, 2, 2)
    assert fabric.n_links == 4**3 // 2
    assert fabric.max_paths == 4
    with pytest.raises(ValueError):
        fat_tree(5)


def test_link_ids_round_trip_and_are_dense() -> None:
    fabric = facebook_fabric(3, 4, 2, 5)
    ids = [fabric.tor_link(p, t, f) for p in range(3) for t in range(4) for f in range(2)]
    ids += [fabric.agg_link(p, f, s) for p in range(3) for f in range(2) for s in range(5)]
    assert sorted(ids) == list(range(fabric.n_links))
    assert fabric.decode(fabric.tor_link(2, 3, 1)) == (2, 3, 1)
    assert fabric.decode(fabric.agg_link(1, 0, 4)) == (1, 0, 4)
    with pytest.raises(ValueError):
        fabric.decode(fabric.n_links)


def test_hand_counted_paths_on_a_small_fabric() -> None:
    # 1 pod, 3 ToRs, 2 planes x 3 spines: 6 paths per ToR when healthy.
    fabric = facebook_fabric(1, 3, 2, 3)
    state = PathState(fabric)
    assert state.tor_paths.tolist() == [[6, 6, 6]]
    state.disable(fabric.tor_link(0, 0, 0))  # ToR 0 loses plane 0: 3 paths left
    assert state.tor_paths.tolist() == [[3, 6, 6]]
    state.disable(fabric.agg_link(0, 0, 1))  # plane 0 has 2 spines: ToRs 1, 2 -> 5; ToR 0 not
    assert state.tor_paths.tolist() == [[3, 5, 5]]
    state.disable(fabric.agg_link(0, 1, 2))  # plane 1 has 2 spines: everybody loses 1
    assert state.tor_paths.tolist() == [[2, 4, 4]]
    assert state.least_paths() == 2
    state.enable(fabric.tor_link(0, 0, 0))  # ToR 0 regains plane 0 with its 2 spines
    assert state.tor_paths.tolist() == [[4, 4, 4]]
    with pytest.raises(ValueError):
        state.enable(fabric.tor_link(0, 0, 0))


def test_incremental_counts_equal_enumeration_under_random_changes() -> None:
    fabric = facebook_fabric(3, 4, 3, 4)
    state = PathState(fabric)
    rng = np.random.default_rng(7)
    for _ in range(300):
        link = int(rng.integers(fabric.n_links))
        state.disable(link) if state.enabled[link] else state.enable(link)
        oracle = enumerate_paths(fabric, state.enabled)
        assert np.array_equal(state.tor_paths, oracle)
        assert np.array_equal(state.pod_min, oracle.min(axis=1))


def test_single_link_check_equals_enumeration_in_reachable_states() -> None:
    """States CorrOpt can reach: links go down only when the check allows it."""
    fabric = facebook_fabric(2, 4, 3, 4)
    state = PathState(fabric)
    rng = np.random.default_rng(11)
    verdicts = []
    for _ in range(200):
        disabled = np.flatnonzero(~state.enabled)
        if disabled.size and rng.random() < 0.3:
            state.enable(int(rng.choice(disabled)))
            continue
        link = int(rng.choice(np.flatnonzero(state.enabled)))
        allowed = state.keeps_minimum(link, 8)
        assert allowed == _oracle_keeps(fabric, state.enabled, link, min_paths=8)
        verdicts.append(allowed)
        if allowed:
            state.disable(link)
    assert any(verdicts) and not all(verdicts)


def _oracle_keeps(fabric: Fabric, enabled: np.ndarray, link: int, min_paths: int) -> bool:
    trial = enabled.copy()
    trial[link] = False
    return bool(enumerate_paths(fabric, trial).min() >= min_paths)


def test_pod_paths_without_a_set_matches_enumeration() -> None:
    fabric = facebook_fabric(2, 3, 2, 3)
    state = PathState(fabric)
    state.disable(fabric.agg_link(1, 0, 0))
    chosen = [fabric.tor_link(1, 0, 1), fabric.agg_link(1, 1, 2), fabric.agg_link(1, 0, 1)]
    trial = state.enabled.copy()
    trial[chosen] = False
    assert state.pod_paths_without(1, chosen).tolist() == enumerate_paths(fabric, trial)[1].tolist()
    with pytest.raises(ValueError):
        state.pod_paths_without(0, chosen)
