"""`lgkit bench-stress`: simulated data frames per second of the virtual-time stress test, and
where the time goes (P4 pipeline passes versus the event loop, traffic manager and links)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from lgkit.sim.native_stress import run_stress_native
from lgkit.sim.scenario import compiled_program
from lgkit.sim.stress import StressRun, StressSpec

GOAL_FRAMES_PER_MINUTE = 10_000_000
NATIVE_SCALE = 10
"""The native loop's runs measure this many times the frames (a run of the Python size is over
in a fraction of a second)."""


@dataclass
class PassClock:
    """Counts the pipeline passes of a switch and the wall time spent inside them."""

    passes: int = 0
    seconds: float = 0.0

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        clock = time.perf_counter

        def timed(*args: Any) -> Any:
            t = clock()
            try:
                return fn(*args)
            finally:
                self.seconds += clock() - t
                self.passes += 1

        return timed


@dataclass
class BenchRun:
    frames: int
    wall_s: float
    cpu_s: float
    events: int
    passes: int
    pass_s: float
    digest: str = ""

    @property
    def frames_per_s(self) -> float:
        return self.frames / self.wall_s

    @property
    def frames_per_cpu_s(self) -> float:
        return self.frames / self.cpu_s


def bench_once(spec: StressSpec) -> BenchRun:
    run = StressRun(spec)
    timer = PassClock()
    for switch in run.net.switches.values():
        pipeline = switch.pipeline
        for name in ("ingress", "ingress_job", "egress"):
            setattr(pipeline, name, timer.wrap(getattr(pipeline, name)))
    cpu = time.process_time()
    result = run.run()
    cpu = time.process_time() - cpu
    return BenchRun(result.generated, result.wall_s, cpu, result.events, timer.passes,
                    timer.seconds, result.digest)


def bench_native(spec: StressSpec) -> BenchRun:
    """One run of the stress test on the native event loop (passes not timed apart)."""
    cpu = time.process_time()
    result = run_stress_native(spec)
    cpu = time.process_time() - cpu
    return BenchRun(result.generated, result.wall_s, cpu, result.events, 0, 0.0,
                    result.digest)


def bench_stress(rate_gbps: float, loss: float, mode: str, frames: int, repeat: int,
                 seed: int) -> str:
    """Run the stress test `repeat` times and report frames/s with min/median/max."""
    compiled_program()
    spec = StressSpec(rate_gbps=rate_gbps, loss=loss, mode=mode, frames=frames,
                      warmup_frames=min(2_000, frames), seed=seed)
    big = replace(spec, frames=spec.frames * NATIVE_SCALE)
    runs, native = [], []
    for _ in range(repeat):  # alternately: the machine's load falls on both alike
        runs.append(bench_once(spec))
        native.append(bench_native(big))
    same = bench_native(spec).digest == runs[0].digest
    return "\n".join(_stress_lines(runs, rate_gbps, loss, mode, repeat)
                     + _native_lines(runs, native, same))


def _mmm(values: list[float], fmt: str = ",.0f") -> str:
    return " / ".join(format(v, fmt) for v in (min(values), statistics.median(values),
                                                max(values)))


def _stress_lines(runs: list[BenchRun], rate_gbps: float, loss: float, mode: str,
                  repeat: int) -> list[str]:
    goal = GOAL_FRAMES_PER_MINUTE / 60
    per_s = [r.frames_per_s for r in runs]
    per_cpu = [r.frames_per_cpu_s for r in runs]
    passes = [r.passes / r.frames for r in runs]
    events = [r.events / r.frames for r in runs]
    us_pass = [1e6 * r.pass_s / r.passes for r in runs]
    share = [r.pass_s / r.wall_s for r in runs]
    free_passes = [r.frames / max(1e-9, r.wall_s - r.pass_s) for r in runs]
    lines = [
        f"bench-stress: {rate_gbps:g}G, mode {mode}, loss {loss:g}, {runs[0].frames} frames "
        f"per run (2,000 of them warm-up), {repeat} runs; min / median / max",
        f"simulated frames/s (wall clock):   {_mmm(per_s)}",
        f"simulated frames/s (CPU time):     {_mmm(per_cpu)}",
        f"simulated frames per wall minute:  {_mmm([60 * v for v in per_s])}",
        f"goal: {GOAL_FRAMES_PER_MINUTE:,} frames per wall minute = {goal:,.0f} frames/s; "
        f"median ratio {statistics.median(per_s) / goal:.4f}",
        f"pipeline passes per frame:         {_mmm(passes, '.1f')}",
        f"events per frame:                  {_mmm(events, '.1f')}",
        f"us per pipeline pass (wall):       {_mmm(us_pass, '.1f')}",
        f"share of wall time in passes:      {_mmm([100 * s for s in share], '.0f')} %",
        f"frames/s if passes cost nothing:   {_mmm(free_passes)} (the event loop, traffic "
        f"manager, links and meters alone)",
    ]
    return lines


def _native_lines(runs: list[BenchRun], native: list[BenchRun], same: bool) -> list[str]:
    """The native event loop's runs beside the Python simulator's."""
    per_min = [[60 * r.frames_per_s for r in rs] for rs in (runs, native)]
    ratio = statistics.median(per_min[1]) / statistics.median(per_min[0])
    return [
        f"native event loop (lgkit/sim/native_stress.py), the same test with "
        f"{native[0].frames:,} frames, alternating with the runs above; min / median / max",
        f"native: simulated frames per wall minute:  {_mmm(per_min[1])}",
        f"native: simulated frames per CPU minute:   "
        f"{_mmm([60 * r.frames_per_cpu_s for r in native])}",
        f"native: events per frame:                  "
        f"{_mmm([r.events / r.frames for r in native], '.1f')}",
        f"native / python (medians, wall): {ratio:.1f}x; native / goal: "
        f"{statistics.median(per_min[1]) / GOAL_FRAMES_PER_MINUTE:.3f}",
        f"native run of the python runs' spec gives the same digest: {'yes' if same else 'NO'}",
    ]
