"""When a disabled link comes back: repair times drawn with the trace, or as the authors'
simulator draws them (a seeded stream at disable time, simultaneous events 1 s apart)."""

from __future__ import annotations

import random
from typing import Protocol

import numpy as np

from lgkit.fabric.artifact import SECONDS_PER_HOUR, to_artifact_links, unique_seconds
from lgkit.fabric.corropt import PodChoice
from lgkit.fabric.topology import Fabric
from lgkit.fabric.trace import HOURS_PER_DAY, Trace

REPAIR_DRAWS = ("trace", "artifact")
ARTIFACT_REPAIR_SEED = 5469321578
"""Seed of the authors' repair-time stream (Python `random.Random`, one `randint(1, 100)` per
link CorrOpt disables, 2 days if at most 80)."""


class Repairs(Protocol):
    """Repair times and the order in which one optimizer run disables its links."""

    onset_hours: list[float]
    """Onset time of every trace event, as this rule sees it."""

    def note_failure(self, link: int, event: int) -> None:
        """Trace event `event` starts (or renews) corruption on the enabled `link`."""

    def note_disabled(self, link: int) -> None:
        """`link` is taken out of service."""

    def order(self, choice: PodChoice) -> list[int]:
        """The links of an optimizer run, in the order they are disabled."""

    def repair_time(self, now_h: float, link: int, fixed: bool) -> float:
        """When `link`, disabled at `now_h`, is back; `fixed`: disable-and-repair's link."""


class TraceRepairs:
    """Each failure in the trace carries its repair time; equal times are taken by link id."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.onset_hours = trace.time_h.tolist()
        self.duration_h = np.zeros(trace.n_links)

    def note_failure(self, link: int, event: int) -> None:
        self.duration_h[link] = self.trace.repair_h[event]

    def note_disabled(self, link: int) -> None:
        pass

    def order(self, choice: PodChoice) -> list[int]:
        return choice.links

    def repair_time(self, now_h: float, link: int, fixed: bool) -> float:
        return now_h + float(self.duration_h[link])


class ArtifactRepairs:
    """The authors' rule: times in whole seconds; each link CorrOpt disables draws its repair
    time from one seeded stream when it is disabled (disable-and-repair: always the long time);
    an event whose second is taken moves 1 s later. The stream follows the order in which
    their optimizer disables links, which is the iteration order of their Python sets of
    corrupting link ids (their numbering); `corrupting` mirrors that set operation by operation.
    """

    def __init__(self, trace: Trace, fabric: Fabric) -> None:
        params = trace.params
        self.theirs = to_artifact_links(fabric, np.arange(fabric.n_links)).tolist()
        self.ours = dict(zip(self.theirs, range(fabric.n_links), strict=True))
        seconds = unique_seconds(np.round(trace.time_h * SECONDS_PER_HOUR))
        self.onset_hours = (seconds / SECONDS_PER_HOUR).tolist()
        self.taken = set(seconds.tolist())
        self.stream = random.Random(ARTIFACT_REPAIR_SEED)
        self.short_percent = round(100 * params.short_repair_share)
        self.short_s = round(params.short_repair_days * HOURS_PER_DAY * SECONDS_PER_HOUR)
        self.long_s = round(params.long_repair_days * HOURS_PER_DAY * SECONDS_PER_HOUR)
        self.corrupting: set[int] = set()

    def note_failure(self, link: int, event: int) -> None:
        self.corrupting.add(self.theirs[link])

    def note_disabled(self, link: int) -> None:
        self.corrupting.discard(self.theirs[link])

    def order(self, choice: PodChoice) -> list[int]:
        free = {self.theirs[link] for link in choice.free}
        free_order = [link for link in self.corrupting.copy() if link in free] if free else []
        for link in free_order:
            self.corrupting.remove(link)
        best_order = []
        if choice.best:
            singles = {self.theirs[link] for link in choice.singles}
            best = {self.theirs[link] for link in choice.best}
            candidates = set()
            for link in self.corrupting:
                if link in singles:
                    candidates.add(link)
            best_order = list(set(tuple(link for link in candidates if link in best)))
        return [self.ours[link] for link in free_order + best_order]

    def repair_time(self, now_h: float, link: int, fixed: bool) -> float:
        if fixed:
            delay = self.long_s
        else:
            delay = self.short_s if self.stream.randint(1, 100) <= self.short_percent \
                else self.long_s
        second = round(now_h * SECONDS_PER_HOUR) + delay
        while second in self.taken:
            second += 1
        self.taken.add(second)
        return second / SECONDS_PER_HOUR


def make_repairs(rule: str, trace: Trace, fabric: Fabric) -> Repairs:
    """The repair rule named `rule` (one of REPAIR_DRAWS) over `trace` on `fabric`."""
    if rule == "artifact":
        return ArtifactRepairs(trace, fabric)
    if rule == "trace":
        return TraceRepairs(trace)
    raise ValueError(f"repair draws must be one of {', '.join(REPAIR_DRAWS)}")
