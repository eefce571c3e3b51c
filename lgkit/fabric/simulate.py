"""Event-driven fabric simulation of one remediation policy over a corruption trace.

Variant 0 of every metric is the policy alone; variant k adds LinkGuardian on a random
`deploys[k-1]` share of the links. LinkGuardian never changes the policy's decisions (the
constraint counts paths and the optimizer ranks raw loss), so one pass yields all variants.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np
from tqdm import tqdm

from lgkit.fabric.corropt import fast_check, min_paths_for, optimize_pod
from lgkit.fabric.lgperf import LOOKUP_SCALES, LgPerformance
from lgkit.fabric.paths import PathState
from lgkit.fabric.repairs import REPAIR_DRAWS, make_repairs
from lgkit.fabric.topology import Fabric
from lgkit.fabric.trace import Trace

HEALTHY_LOSS = 1e-18
"""Loss rate a healthy link adds to the total penalty (keeps penalty ratios finite)."""
CAPACITY_UNITS_PER_GBPS = 1_000_000
"""Capacities are summed as integers (kb/s) so that equal states compare exactly equal."""

HEALTHY, CORRUPTING, DISABLED = 0, 1, 2
REFAILURES = ("update", "ignore")


@dataclass(frozen=True)
class ModelChoices:
    """Where the model may follow the authors' simulator (the defaults but `repair_draws`)."""

    lg_lookup: str = "linear"
    """LG table row of a loss rate: nearest on a linear scale (theirs) or in log10."""
    refailure: str = "update"
    """A new onset on a corrupting link: `update` its loss rate and re-run the fast checker
    (theirs), or `ignore` it."""
    repair_draws: str = "trace"
    """Repair times: drawn with each trace event (`trace`) or as theirs (`artifact`)."""

    def __post_init__(self) -> None:
        for name, allowed in (("lg_lookup", LOOKUP_SCALES), ("refailure", REFAILURES),
                              ("repair_draws", REPAIR_DRAWS)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}")


BEFORE_ISSUE_15 = ModelChoices(lg_lookup="log", refailure="ignore", repair_draws="trace")
"""The rules of lgkit's earlier runs (their metadata names no choices)."""


class Policy(StrEnum):
    """How the operator reacts to a link that starts corrupting."""

    NOTHING = "do-nothing"
    DISABLE = "disable-and-repair"
    CORROPT = "corropt"


@dataclass
class Series:
    """Fabric metrics after every event (a step function of time)."""

    policy: Policy
    deploys: tuple[float, ...]
    """LinkGuardian deployment share of variants 1..; variant 0 has none."""
    time_h: np.ndarray
    penalty: np.ndarray
    """(rows, variants): sum of the effective loss rates of enabled links."""
    least_paths: np.ndarray
    """Least paths of any ToR as a share of the healthy count."""
    least_capacity: np.ndarray
    """(rows, variants): least pod capacity to the spine layer, as a share of a healthy pod."""
    n_disabled: np.ndarray
    n_corrupting: np.ndarray
    """Corrupting links left enabled."""


@dataclass
class _Recorder:
    """Preallocated columns of a Series."""

    rows: int
    variants: int
    used: int = 0
    columns: dict[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        wide = (self.rows, self.variants)
        self.columns = {
            "time_h": np.empty(self.rows), "penalty": np.empty(wide),
            "least_paths": np.empty(self.rows), "least_capacity": np.empty(wide),
            "n_disabled": np.empty(self.rows, np.int32),
            "n_corrupting": np.empty(self.rows, np.int32),
        }

    def add(self, **values: object) -> None:
        for name, value in values.items():
            self.columns[name][self.used] = value
        self.used += 1

    def series(self, policy: Policy, deploys: tuple[float, ...]) -> Series:
        trimmed = {name: column[: self.used].copy() for name, column in self.columns.items()}
        return Series(policy, deploys, **trimmed)


class FabricSimulation:
    """One policy, one trace, one capacity constraint; LinkGuardian variants on top."""

    def __init__(
        self,
        fabric: Fabric,
        trace: Trace,
        policy: Policy,
        constraint: float,
        lg: LgPerformance | None = None,
        deploys: tuple[float, ...] = (),
        choices: ModelChoices = ModelChoices(),
    ) -> None:
        if trace.n_links != fabric.n_links:
            raise ValueError(f"trace has {trace.n_links} links, fabric {fabric.n_links}")
        if deploys and lg is None:
            raise ValueError("LinkGuardian deployment needs a performance table")
        if any(not 0.0 <= share <= 1.0 for share in deploys):
            raise ValueError("deployment shares must be within [0, 1]")
        self.fabric, self.trace, self.policy, self.deploys = fabric, trace, policy, deploys
        self.choices = choices
        self.repair_rule = make_repairs(choices.repair_draws, trace, fabric)
        self.min_paths = min_paths_for(constraint, fabric.max_paths)
        self.paths = PathState(fabric)
        self.status = np.zeros(fabric.n_links, np.int8)
        self.corrupting: list[dict[int, float]] = [{} for _ in range(fabric.pods)]
        """Per pod: enabled corrupting link -> raw loss rate."""
        self.n_disabled = 0
        self.n_corrupting = 0
        self.repairs: list[tuple[float, int]] = []
        variants = 1 + len(deploys)
        self.link_penalty = np.zeros((fabric.n_links, variants))
        self.link_capacity = np.zeros((fabric.n_links, variants), np.int64)
        self.pod_penalty = np.zeros((variants, fabric.pods))
        full_link = round(fabric.link_gbps * CAPACITY_UNITS_PER_GBPS)
        self.full_link = full_link
        self.cap_down = np.full((variants, fabric.pods), fabric.tor_links_per_pod * full_link)
        self.cap_up = np.full((variants, fabric.pods), fabric.agg_links_per_pod * full_link)
        self.event_penalty, self.event_capacity = self._effective_values(trace, lg)

    def _effective_values(
        self, trace: Trace, lg: LgPerformance | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Per trace event and variant: penalty and capacity of the link while it corrupts."""
        variants = 1 + len(self.deploys)
        penalty = np.repeat(trace.loss[:, None], variants, axis=1)
        capacity = np.full((len(trace), variants), self.full_link, np.int64)
        if lg is None or not self.deploys:
            return penalty, capacity
        effective_loss, share = lg.lookup(trace.loss, self.choices.lg_lookup)
        rank = np.random.default_rng([trace.params.seed, 1]).random(self.fabric.n_links)
        for variant, deploy in enumerate(self.deploys, start=1):
            protected = rank[trace.link] < deploy
            penalty[protected, variant] = effective_loss[protected]
            protected_capacity = np.round(share[protected] * self.full_link).astype(np.int64)
            capacity[protected, variant] = protected_capacity
        return penalty, capacity

    def run(self, progress: bool = False) -> Series:
        """Replay the trace until its horizon and return the metrics after every event."""
        trace = self.trace
        horizon = trace.params.horizon_hours
        times, links = self.repair_rule.onset_hours, trace.link.tolist()
        recorder = _Recorder(2 * len(trace) + 1, 1 + len(self.deploys))
        self._record(recorder, 0.0)
        onset = 0
        with tqdm(total=len(trace), unit="event", disable=not progress,
                  desc=f"{self.policy}", mininterval=1.0) as bar:
            while True:
                next_onset = min(times[onset], horizon) if onset < len(times) else horizon
                if self.repairs and self.repairs[0][0] <= next_onset:
                    when, link = heapq.heappop(self.repairs)
                    self._repair(when, link)
                elif next_onset < horizon:
                    changed = self._onset(onset, next_onset, links[onset])
                    onset += 1
                    if onset % 4096 == 0:
                        bar.update(4096)
                    if not changed:
                        continue
                    when = next_onset
                else:
                    break
                self._record(recorder, when)
            bar.update(onset % 4096)
        return recorder.series(self.policy, self.deploys)

    def _onset(self, event: int, when: float, link: int) -> bool:
        """A link starts corrupting (or, if corrupting, changes loss rate); False if ignored."""
        status = self.status[link]
        if status == DISABLED or (status == CORRUPTING and self.choices.refailure == "ignore"):
            return False
        self.repair_rule.note_failure(link, event)
        if self.policy is Policy.DISABLE or (
            self.policy is Policy.CORROPT and fast_check(self.paths, link, self.min_paths)
        ):
            self._disable(when, link)
        elif status == CORRUPTING:
            self._renew_corruption(link, event)
        else:
            self._start_corrupting(link, event)
        return True

    def _repair(self, when: float, link: int) -> None:
        """A repaired link returns healthy; CorrOpt then re-optimises the link's pod."""
        self.status[link] = HEALTHY
        self.n_disabled -= 1
        self.paths.enable(link)
        self._add_capacity(link, np.full(self.cap_up.shape[0], self.full_link))
        if self.policy is Policy.CORROPT:
            pod = self.fabric.pod_of(link)
            choice = optimize_pod(self.paths, pod, self.corrupting[pod], self.min_paths)
            for chosen in self.repair_rule.order(choice):
                self._disable(when, chosen)

    def _start_corrupting(self, link: int, event: int) -> None:
        pod = self.fabric.pod_of(link)
        self.status[link] = CORRUPTING
        self.corrupting[pod][link] = float(self.trace.loss[event])
        self.n_corrupting += 1
        self.link_penalty[link] = self.event_penalty[event]
        self.link_capacity[link] = self.event_capacity[event]
        self.pod_penalty[:, pod] += self.link_penalty[link]
        self._add_capacity(link, self.link_capacity[link] - self.full_link)

    def _renew_corruption(self, link: int, event: int) -> None:
        """A corrupting link takes the loss rate (and LG's effective values) of a new onset."""
        pod = self.fabric.pod_of(link)
        self.corrupting[pod][link] = float(self.trace.loss[event])
        self.pod_penalty[:, pod] += self.event_penalty[event] - self.link_penalty[link]
        self._add_capacity(link, self.event_capacity[event] - self.link_capacity[link])
        self.link_penalty[link] = self.event_penalty[event]
        self.link_capacity[link] = self.event_capacity[event]

    def _disable(self, when: float, link: int) -> None:
        """Take a link out of service (healthy or corrupting) and schedule its repair."""
        pod = self.fabric.pod_of(link)
        if self.status[link] == CORRUPTING:
            del self.corrupting[pod][link]
            self.n_corrupting -= 1
            self._add_capacity(link, -self.link_capacity[link])
            self._recompute_pod_penalty(pod)
        else:
            self._add_capacity(link, np.full(self.cap_up.shape[0], -self.full_link))
        self.status[link] = DISABLED
        self.n_disabled += 1
        self.paths.disable(link)
        self.repair_rule.note_disabled(link)
        repair_at = self.repair_rule.repair_time(when, link, self.policy is Policy.DISABLE)
        heapq.heappush(self.repairs, (repair_at, link))

    def _recompute_pod_penalty(self, pod: int) -> None:
        """Exact pod sum after a removal (no floating-point drift over a year of events)."""
        members = list(self.corrupting[pod])
        self.pod_penalty[:, pod] = self.link_penalty[members].sum(axis=0) if members else 0.0

    def _add_capacity(self, link: int, delta: np.ndarray) -> None:
        pod = self.fabric.pod_of(link)
        layer = self.cap_down if self.fabric.is_tor_link(link) else self.cap_up
        layer[:, pod] += delta

    def _record(self, recorder: _Recorder, when: float) -> None:
        n_healthy = self.fabric.n_links - self.n_corrupting - self.n_disabled
        least_capacity = np.minimum(self.cap_down, self.cap_up).min(axis=1)
        recorder.add(
            time_h=when,
            penalty=self.pod_penalty.sum(axis=1) + n_healthy * HEALTHY_LOSS,
            least_paths=self.paths.least_paths() / self.fabric.max_paths,
            least_capacity=least_capacity
            / (self.fabric.pod_capacity_gbps * CAPACITY_UNITS_PER_GBPS),
            n_disabled=self.n_disabled,
            n_corrupting=self.n_corrupting,
        )
