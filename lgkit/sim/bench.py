"""`lgkit bench-stress`: simulated data frames per second of the virtual-time stress test, and
where the time goes (P4 pipeline passes versus the event loop, traffic manager and links)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from lgkit.sim.chain import ChainSpec, run_native, run_python
from lgkit.sim.scenario import compiled_program
from lgkit.sim.stress import StressRun, StressSpec

GOAL_FRAMES_PER_MINUTE = 10_000_000
NATIVE_SCALE = 10
"""The native loop's runs carry this many times the stress test's frames (a run of the Python
size is over in tens of ms)."""
PYTHON_CHAIN_FRAMES = 5_000
"""The Python simulator's chain runs (its rate is the stress test's, printed above)."""
CHAIN_LOAD = 0.9
"""The chain's generator rate as a share of the link (LinkGuardian's frames need the rest)."""


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
                    timer.seconds)


def bench_stress(rate_gbps: float, loss: float, mode: str, frames: int, repeat: int,
                 seed: int) -> str:
    """Run the stress test `repeat` times and report frames/s with min/median/max."""
    compiled_program()
    spec = StressSpec(rate_gbps=rate_gbps, loss=loss, mode=mode, frames=frames,
                      warmup_frames=min(2_000, frames), seed=seed)
    runs = [bench_once(spec) for _ in range(repeat)]
    lines = _stress_lines(runs, rate_gbps, loss, mode, repeat)
    chain = ChainSpec(frames=min(PYTHON_CHAIN_FRAMES, frames), rate_gbps=rate_gbps, loss=loss,
                      seed=seed, protected=mode != "off", load=CHAIN_LOAD)
    native = replace(chain, frames=(frames + min(2_000, frames)) * NATIVE_SCALE)
    return "\n".join(lines + _chain_lines(chain, native, repeat))


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


def _chain_lines(spec: ChainSpec, big: ChainSpec, repeat: int) -> list[str]:
    """The chain on the Python simulator and on the native event loop, alternately in the same
    run, and whether both delivered the same at the Python run's size (chain.py)."""
    python, native = [], []
    for _ in range(repeat):
        python.append(run_python(spec))
        native.append(run_native(big))
    same = run_native(spec).digest == python[0].digest
    per_min = [[60 * r.frames / r.wall_s for r in runs] for runs in (python, native)]
    per_cpu = [[60 * r.frames / r.cpu_s for r in runs] for runs in (python, native)]
    events = [[r.events / r.frames for r in runs] for runs in (python, native)]
    goal = GOAL_FRAMES_PER_MINUTE
    ratio = statistics.median(per_min[1]) / statistics.median(per_min[0])
    what = "LinkGuardian on" if spec.protected else "LinkGuardian off"
    return [
        f"native event loop (lgkit/sim/native_loop.py) on the chain generator -> s1 -> lossy "
        f"link -> s2 -> h2 ({what}, {100 * spec.load:g}% load, the scenario's timing; no "
        f"stress meters), alternating with the Python simulator; min / median / max",
        f"python simulator, python engine, {spec.frames:,} frames: frames per wall minute "
        f"{_mmm(per_min[0])}, per CPU minute {_mmm(per_cpu[0])}, "
        f"{_mmm(events[0], '.1f')} events per frame",
        f"native event loop, {big.frames:,} frames: frames per wall minute {_mmm(per_min[1])}, "
        f"per CPU minute {_mmm(per_cpu[1])}, {_mmm(events[1], '.1f')} events per frame",
        f"native / python (medians): {ratio:.1f}x wall; native / goal: "
        f"{statistics.median(per_min[1]) / goal:.2f}",
        f"identical to the python simulator at {spec.frames:,} frames (arrivals, losses, "
        f"events): {'yes' if same else 'NO'}",
    ]
