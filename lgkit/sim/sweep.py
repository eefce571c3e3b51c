"""Sweeps of stress-test points: the points of each experiment at quick or default scale, run in
parallel processes (a local Dask cluster, or a given scheduler) and cached as JSON summaries."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lgkit.sim.native_loop import NativeLoopError
from lgkit.sim.native_stress import run_stress_native
from lgkit.sim.stress import StressResult, StressSpec, percentiles_us, run_stress
from lgkit.sw.atomic_file import write_atomic
from lgkit.sw.exec.pipeline import chosen_engine

RATES = (25.0, 100.0)
LOSSES = (1e-5, 1e-4, 1e-3)
MODES = ("lg", "lg_nb")
MAX_DELAYS_KEPT = 20_000


@dataclasses.dataclass(frozen=True)
class Scale:
    """How many frames a point gets: simulated at 1e-3 and above, covered (with loss-free runs
    cut to `max_gap`) below."""

    name: str
    frames_1e3: int
    covered_1e4: int
    covered_1e5: int
    max_gap: int
    burst_frames: int
    law_frames: dict[float, int]


QUICK = Scale("quick", 4_000, 40_000, 400_000, 400, 6_000, {5e-2: 8_000})
DEFAULT = Scale("default", 50_000, 500_000, 5_000_000, 800, 30_000,
                {1e-2: 150_000, 2e-2: 60_000, 5e-2: 20_000})


def scale_for(quick: bool) -> Scale:
    return QUICK if quick else DEFAULT


def stress_points(scale: Scale, seed: int) -> list[StressSpec]:
    """Fig. 8's grid (also Fig. 12, Fig. 17, Table 4 and the timeouts): 25G and 100G, loss
    1e-5, 1e-4, 1e-3, LG and LG_NB, target 1e-8."""
    points = []
    for rate in RATES:
        for loss in LOSSES:
            for mode in MODES:
                if loss >= 1e-3:
                    size = {"frames": scale.frames_1e3}
                else:
                    covered = scale.covered_1e4 if loss >= 1e-4 else scale.covered_1e5
                    size = {"frames": covered, "max_gap": scale.max_gap}
                points.append(StressSpec(rate_gbps=rate, loss=loss, mode=mode, seed=seed,
                                         **size))  # type: ignore[arg-type]
    return points


def burst_points(scale: Scale, seed: int) -> list[StressSpec]:
    """Fig. 18: consecutive losses at 1% and 5%, i.i.d. and bursty (Gilbert-Elliott, bursts of
    2 frames on average), 100G, LG."""
    return [StressSpec(rate_gbps=100.0, loss=loss, burst=burst, mode="lg", seed=seed,
                       frames=scale.burst_frames, warmup_frames=1_000)
            for loss in (1e-2, 5e-2) for burst in (1.0, 2.0)]


def law_points(scale: Scale, seed: int) -> list[StressSpec]:
    """The p^(N+1) law where it is observable: LG_NB, N = 1, p in [1e-2, 5e-2], 100G."""
    return [StressSpec(rate_gbps=100.0, loss=p, copies=1, mode="lg_nb", seed=seed,
                       frames=frames, warmup_frames=500)
            for p, frames in sorted(scale.law_frames.items())]


CODE = [Path(__file__).resolve().parents[1] / part for part in (
    "sim/stress.py", "sim/timing.py", "sim/scenario.py", "core/frames.py", "sw/switch/vnet.py",
    "sw/switch/loss.py", "sw/switch/tm.py", "sw/switch/switch.py", "control/linkguardian.py")]
PROGRAM_DIR = Path(__file__).resolve().parents[2] / "p4"


@functools.cache
def code_digest() -> str:
    """What a cached point depends on besides its spec: the simulator's and the P4 code."""
    h = hashlib.sha256()
    for path in [*CODE, *sorted(PROGRAM_DIR.rglob("*.p4"))]:
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def point_key(spec: StressSpec) -> str:
    """A point's cache key: its spec (but the engine, which gives the same result) and the code
    that runs it."""
    fields = dataclasses.asdict(spec)
    del fields["engine"]
    text = json.dumps(fields, sort_keys=True, default=str) + code_digest()
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def summarize(result: StressResult) -> dict[str, Any]:
    """What the experiments and notebooks need from one point, as JSON-able values."""
    s = result.spec
    low, high = result.effective_loss_interval()
    return {
        "rate_gbps": s.rate_gbps, "loss": s.loss, "burst": s.burst, "mode": s.mode,
        "target": s.target, "copies": result.copies, "seed": s.seed,
        "covered": result.covered, "generated": result.generated, "skipped": result.skipped,
        "actual_loss": result.actual_loss, "original_loss": result.original_loss,
        "retx_loss": result.retx_loss, "effective_loss": result.effective_loss,
        "effective_loss_low": low, "effective_loss_high": high,
        "lost_onward": result.lost_onward, "protected": result.protected + result.skipped,
        "theory_loss": result.theory_loss(), "effective_gbps": result.effective_gbps,
        "speed_reduction": result.speed_reduction,
        "tx_buffer": result.buffer_percentiles("tx"),
        "rx_buffer": result.buffer_percentiles("rx"),
        "tx_max_bytes": result.tx_max_bytes, "rx_max_bytes": result.rx_max_bytes,
        "tx_alive_max_bytes": result.tx_alive_max_bytes,
        "rx_alive_max_bytes": result.rx_alive_max_bytes,
        "resume_flight_us": percentiles_us(result.resume_flights_ns),
        "retx_delay_us": result.delay_percentiles(),
        "retx_delays_ns": result.retx_delays_ns[:MAX_DELAYS_KEPT],
        "bursts": {str(k): v for k, v in result.bursts.items()},
        "recirc_tx_pct": result.recirc_overhead("tx"),
        "recirc_rx_pct": result.recirc_overhead("rx"),
        "counters": result.counters, "tail_drops": result.tail_drops,
        "unrecovered_holes": result.unrecovered_holes,
        "wall_s": result.wall_s, "frames_per_s": result.frames_per_wall_s,
        "digest": result.digest,
    }


def run_point(spec: StressSpec) -> dict[str, Any]:
    """Run one point in this process (what each worker does): on the native event loop when
    the switches' engine is native (`spec.engine`, else LGKIT_ENGINE, else the default) and the
    loop models the point (the same result, ~25x faster), else on the Python simulator."""
    if chosen_engine(spec.engine) == "native":
        try:
            return summarize(run_stress_native(spec))
        except NativeLoopError:
            pass
    return summarize(run_stress(spec))


def run_points(specs: Sequence[StressSpec], cache: Path | None = None, workers: int = 2,
               scheduler: str | None = None,
               on_done: Callable[[], object] | None = None) -> list[dict[str, Any]]:
    """Summaries of `specs` in order: from `cache` (a folder of JSON files keyed by spec and
    code) when there, else run in `workers` local processes (Dask) or on `scheduler`, each
    cached as it arrives; `on_done()` after each point."""
    results: dict[int, dict[str, Any]] = {}
    todo = []
    for i, spec in enumerate(specs):
        path = cache / f"{point_key(spec)}.json" if cache else None
        if path is not None and path.exists():
            results[i] = json.loads(path.read_text())
            if on_done:
                on_done()
        else:
            todo.append(i)

    def keep(i: int, summary: dict[str, Any]) -> None:
        results[i] = summary
        if cache is not None:
            cache.mkdir(parents=True, exist_ok=True)
            path = cache / f"{point_key(specs[i])}.json"
            write_atomic(path, json.dumps(summary))
        if on_done:
            on_done()

    if todo and (workers > 1 or scheduler):
        _run_dask([specs[i] for i in todo], todo, keep, workers, scheduler)
    else:
        for i in todo:
            keep(i, run_point(specs[i]))
    return [results[i] for i in range(len(specs))]


def _run_dask(specs: list[StressSpec], index: list[int],
              keep: Callable[[int, dict[str, Any]], None], workers: int,
              scheduler: str | None) -> None:
    from dask.distributed import as_completed

    from lgkit.core.cluster import dask_client

    with dask_client(scheduler, workers) as client:
        futures = client.map(run_point, specs, pure=False)  # type: ignore[attr-defined]
        position = {future.key: i for future, i in zip(futures, index, strict=True)}
        for future in as_completed(futures):
            keep(position[future.key], future.result())
            future.release()
