"""CorrOpt (SIGCOMM'17): the fast checker and the exact optimizer over one pod.

Every capacity constraint involves the ToRs of one pod, so the optimizer works pod by pod.
After an optimizer run no further single corrupting link can be disabled (the optimum of a
positive-loss objective is maximal), and only repairs add paths back, so after a repair
only the repaired link's pod needs a new optimizer run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from lgkit.fabric.paths import PathState


def min_paths_for(constraint: float, max_paths: int) -> int:
    """Least paths a ToR must keep: ceil(max_paths * constraint); violated only strictly below."""
    if not 0.0 < constraint <= 1.0:
        raise ValueError(f"capacity constraint {constraint} outside (0, 1]")
    return math.ceil(max_paths * constraint - 1e-9)


def fast_check(state: PathState, link: int, min_paths: int) -> bool:
    """The fast checker: may this newly corrupting, enabled link be disabled right now?"""
    return state.keeps_minimum(link, min_paths)


@dataclass(frozen=True)
class PodChoice:
    """What the optimizer disables in one pod, in the two steps of CorrOpt's algorithm."""

    free: list[int] = field(default_factory=list)
    """Links that cannot hurt any ToR that would violate with every candidate disabled."""
    singles: list[int] = field(default_factory=list)
    """The other candidates that could each be disabled alone on top of `free`."""
    best: list[int] = field(default_factory=list)
    """The feasible subset of `singles` with the largest summed loss."""

    @property
    def links(self) -> list[int]:
        """Every link to disable, by id."""
        return sorted(self.free + self.best)


def optimize_pod(
    state: PathState, pod: int, corrupting: Mapping[int, float], min_paths: int
) -> PodChoice:
    """Links of `pod` to disable among its enabled corrupting links (link -> raw loss rate).

    Minimises the summed loss of the links left enabled, i.e. maximises the disabled loss,
    subject to every ToR of the pod keeping `min_paths`. Exact: links that cannot hurt any
    ToR that would violate with all candidates disabled are always taken; the rest go
    through a branch-and-bound subset search that skips supersets of rejected sets.
    """
    if not corrupting:
        return PodChoice()
    everything = state.pod_paths_without(pod, corrupting)
    if everything.min() >= min_paths:
        return PodChoice(free=list(corrupting))
    violating = everything < min_paths
    free = [link for link in corrupting if not violating[state.affected_tors(link)].any()]
    free_set = set(free)
    contested = {link: loss for link, loss in corrupting.items() if link not in free_set}
    singles, best = _best_subset(state, pod, free, contested, min_paths)
    return PodChoice(free, singles, best)


def _best_subset(
    state: PathState,
    pod: int,
    taken: list[int],
    candidates: Mapping[int, float],
    min_paths: int,
) -> tuple[list[int], list[int]]:
    """(candidates feasible alone, their feasible subset with the largest summed loss), both
    on top of `taken`."""

    def feasible(links: list[int]) -> bool:
        return bool(state.pod_paths_without(pod, taken + links).min() >= min_paths)

    singles = sorted(
        (link for link in candidates if feasible([link])), key=lambda link: -candidates[link]
    )
    losses = [candidates[link] for link in singles]
    remaining_loss = np.cumsum(losses[::-1])[::-1].tolist() + [0.0]
    rejected: list[frozenset[int]] = []
    best: tuple[float, list[int]] = (0.0, [])

    def search(index: int, chosen: list[int], gain: float) -> None:
        nonlocal best
        if gain > best[0]:
            best = (gain, chosen)
        if index == len(singles) or gain + remaining_loss[index] <= best[0]:
            return
        grown = chosen + [singles[index]]
        grown_set = frozenset(grown)
        if not any(reject <= grown_set for reject in rejected):
            if len(grown) == 1 or feasible(grown):
                search(index + 1, grown, gain + losses[index])
            else:
                rejected.append(grown_set)
        search(index + 1, chosen, gain)

    search(0, [], 0.0)
    return singles, best[1]
