"""One simulation run (a trace, a constraint, every policy) and its results folder."""

from __future__ import annotations

import json
import resource
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from lgkit.fabric.lgperf import DEFAULT_TABLE, LgPerformance
from lgkit.fabric.metrics import Comparison, compare
from lgkit.fabric.simulate import FabricSimulation, Policy, Series
from lgkit.fabric.topology import Fabric, facebook_fabric
from lgkit.fabric.trace import HOURS_PER_DAY, Trace, TraceParams, generate_trace

META_FILE = "meta.json"
TRACE_FILE = "trace.npz"


@dataclass(frozen=True)
class RunSpec:
    """Everything that determines a run."""

    fabric: Fabric
    constraint: float
    trace: TraceParams
    deploys: tuple[float, ...] = (1.0,)
    policies: tuple[Policy, ...] = (Policy.CORROPT, Policy.DISABLE, Policy.NOTHING)
    lg_table: str = str(DEFAULT_TABLE)
    trace_file: str | None = None
    """Replay this saved trace instead of drawing one from `trace`."""

    @property
    def name(self) -> str:
        """Folder name of the run."""
        percent = round(self.constraint * 100)
        return f"{self.fabric.name}-p{self.fabric.pods}-c{percent}-s{self.trace.seed}"

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form for metadata."""
        return {
            "fabric": self.fabric.to_dict(), "constraint": self.constraint,
            "trace": asdict(self.trace), "deploys": list(self.deploys),
            "policies": [str(policy) for policy in self.policies],
            "lg_table": self.lg_table, "trace_file": self.trace_file,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunSpec:
        """Inverse of `to_dict`."""
        return cls(
            Fabric(**data["fabric"]), data["constraint"], TraceParams(**data["trace"]),
            tuple(data["deploys"]), tuple(Policy(name) for name in data["policies"]),
            data["lg_table"], data["trace_file"],
        )


@dataclass
class RunResult:
    """The series of every policy of a run, its trace and what it cost."""

    spec: RunSpec
    trace: Trace
    series: dict[Policy, Series]
    seconds: dict[str, float] = field(default_factory=dict)
    """Wall time per step: 'trace' and one entry per policy."""
    peak_rss_mb: float = 0.0

    @property
    def window(self) -> tuple[float, float]:
        """The measured period in hours (after the warm-up)."""
        params = self.trace.params
        return params.warmup_days * HOURS_PER_DAY, params.horizon_hours

    def comparisons(self) -> list[Comparison]:
        """CorrOpt against CorrOpt + LinkGuardian, one per deployment share."""
        corropt = self.series.get(Policy.CORROPT)
        if corropt is None:
            return []
        return [compare(corropt, variant, *self.window)
                for variant in range(1, len(self.spec.deploys) + 1)]


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far (MB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def load_or_draw_trace(spec: RunSpec) -> Trace:
    """The run's trace: the saved file if one is named, else a fresh draw from its seed."""
    if spec.trace_file is None:
        return generate_trace(spec.fabric.n_links, spec.trace)
    path = Path(spec.trace_file)
    if not path.is_file():
        raise ValueError(f"trace file not found: {path}")
    trace = Trace.load(path)
    if trace.n_links != spec.fabric.n_links:
        raise ValueError(f"trace {path} has {trace.n_links} links, fabric {spec.fabric.n_links}")
    return trace


def execute(spec: RunSpec, progress: bool = False) -> RunResult:
    """Draw (or load) the trace and simulate every policy of the spec."""
    started = time.perf_counter()
    trace = load_or_draw_trace(spec)
    seconds = {"trace": time.perf_counter() - started}
    lg = LgPerformance.load(Path(spec.lg_table)) if spec.deploys else None
    series = {}
    for policy in spec.policies:
        started = time.perf_counter()
        simulation = FabricSimulation(spec.fabric, trace, policy, spec.constraint, lg,
                                      spec.deploys)
        series[policy] = simulation.run(progress=progress)
        seconds[str(policy)] = time.perf_counter() - started
    return RunResult(spec, trace, series, seconds, peak_rss_mb())


def save(result: RunResult, results_dir: Path) -> Path:
    """Write the run into `results_dir/<run name>/` and return that folder."""
    folder = results_dir / result.spec.name
    folder.mkdir(parents=True, exist_ok=True)
    result.trace.save(folder / TRACE_FILE)
    for policy, series in result.series.items():
        np.savez_compressed(
            folder / f"series-{policy}.npz", time_h=series.time_h, penalty=series.penalty,
            least_paths=series.least_paths, least_capacity=series.least_capacity,
            n_disabled=series.n_disabled, n_corrupting=series.n_corrupting,
        )
    meta = {
        "spec": result.spec.to_dict(), "seconds": result.seconds,
        "peak_rss_mb": result.peak_rss_mb, "trace_events": len(result.trace),
        "comparisons": [comparison.to_dict() for comparison in result.comparisons()],
    }
    (folder / META_FILE).write_text(json.dumps(meta, indent=2) + "\n")
    return folder


def load(folder: Path) -> RunResult:
    """Read a run folder written by `save`."""
    meta_path = folder / META_FILE
    if not meta_path.is_file():
        raise ValueError(f"not a fabric run folder (no {META_FILE}): {folder}")
    meta = json.loads(meta_path.read_text())
    spec = RunSpec.from_dict(meta["spec"])
    series = {}
    for policy in spec.policies:
        with np.load(folder / f"series-{policy}.npz") as data:
            series[policy] = Series(policy, spec.deploys, **{key: data[key] for key in data})
    return RunResult(spec, Trace.load(folder / TRACE_FILE), series, meta["seconds"],
                     meta["peak_rss_mb"])


def find_runs(results_dir: Path) -> list[Path]:
    """Run folders in `results_dir` (or the folder itself if it is a run), sorted by name."""
    if (results_dir / META_FILE).is_file():
        return [results_dir]
    if not results_dir.is_dir():
        raise ValueError(f"results folder not found: {results_dir}")
    return sorted(path.parent for path in results_dir.glob(f"*/{META_FILE}"))


def ensure_results(
    results_dir: Path, constraints: tuple[float, ...] = (0.5, 0.75), pods: int = 20,
    days: float = 365.0, seed: int = 1,
) -> list[Path]:
    """Run folders in `results_dir`; if there are none, simulate a small FB fabric there first."""
    if results_dir.is_dir() and find_runs(results_dir):
        return find_runs(results_dir)
    params = TraceParams(seed=seed, days=days)
    for constraint in constraints:
        spec = RunSpec(facebook_fabric(pods=pods), constraint, params)
        save(execute(spec), results_dir)
    return find_runs(results_dir)
