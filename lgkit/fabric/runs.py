"""One simulation run (a trace, a constraint, every policy) and its results folder."""

from __future__ import annotations

import json
import os
import resource
import shutil
import time
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from lgkit.fabric import artifact
from lgkit.fabric.lgperf import DEFAULT_TABLE, LgPerformance
from lgkit.fabric.metrics import Comparison, compare
from lgkit.fabric.simulate import BEFORE_ISSUE_15, FabricSimulation, ModelChoices, Policy, Series
from lgkit.fabric.topology import Fabric, facebook_fabric
from lgkit.fabric.trace import HOURS_PER_DAY, Trace, TraceParams, generate_trace

META_FILE = "meta.json"
TRACE_FILE = "trace.npz"
MAX_LINKS = 2_000_000
"""Largest fabric a run accepts (20x the paper's): memory grows with the link count."""
MAX_ONSETS = 10_000_000
"""Most corruption onsets a run accepts (~100 full-size years): memory grows with them."""
MAX_TRACE_BYTES = 2 * 1024**3


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
    """Replay this saved trace (.npz, or the authors' JSON) instead of drawing one."""
    choices: ModelChoices = ModelChoices()

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
            "choices": asdict(self.choices),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunSpec:
        """Inverse of `to_dict`."""
        return cls(
            Fabric(**data["fabric"]), data["constraint"], TraceParams(**data["trace"]),
            tuple(data["deploys"]), tuple(Policy(name) for name in data["policies"]),
            data["lg_table"], data["trace_file"],
            ModelChoices(**data["choices"]) if "choices" in data else BEFORE_ISSUE_15,
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


def check_spec(spec: RunSpec) -> None:
    """Refuse, before any work, a run that would exhaust memory or whose input files are
    missing or unreadable: ValueError saying why (and naming the file)."""
    if spec.deploys:
        LgPerformance.load(Path(spec.lg_table))
    if spec.trace_file is not None:
        _trace_format(Path(spec.trace_file))
    links = spec.fabric.n_links
    if links > MAX_LINKS:
        raise ValueError(f"the fabric has {links:,} links; at most {MAX_LINKS:,} are supported")
    if spec.trace_file is None:
        onsets = links * spec.trace.horizon_hours / spec.trace.mttf_hours
        if onsets > MAX_ONSETS:
            raise ValueError(
                f"{links:,} links over {spec.trace.warmup_days + spec.trace.days:g} days with an "
                f"MTTF of {spec.trace.mttf_hours:g} h make ~{onsets:,.0f} onsets; at most "
                f"{MAX_ONSETS:,} are supported (fewer days, fewer links or a longer MTTF)")


def load_or_draw_trace(spec: RunSpec) -> Trace:
    """The run's trace: the saved file if one is named, else a fresh draw from its seed."""
    if spec.trace_file is None:
        return generate_trace(spec.fabric.n_links, spec.trace)
    path = Path(spec.trace_file)
    if _trace_format(path) == "artifact":
        trace = artifact.read_trace(path, spec.fabric, spec.trace)
    else:
        trace = Trace.load(path)
    if trace.n_links != spec.fabric.n_links:
        raise ValueError(f"trace {path} has {trace.n_links} links, fabric {spec.fabric.n_links}")
    if len(trace) > MAX_ONSETS:
        raise ValueError(f"{path}: {len(trace):,} onsets; at most {MAX_ONSETS:,} are supported")
    return trace


def _trace_format(path: Path) -> str:
    """`npz` (lgkit's) or `artifact` (the authors' JSON), from the file's first bytes."""
    if not path.is_file():
        raise ValueError(f"trace file not found (or not a regular file): {path}")
    if path.stat().st_size > MAX_TRACE_BYTES:
        raise ValueError(f"{path}: larger than {MAX_TRACE_BYTES // 1024**3} GB")
    try:
        with path.open("rb") as file:
            head = file.read(64).lstrip()
    except OSError as error:
        raise ValueError(f"{path}: cannot read: {error.strerror}") from None
    if head.startswith(b"{"):
        return "artifact"
    if head.startswith(b"PK"):
        return "npz"
    raise ValueError(f"{path}: not a trace (neither lgkit's .npz nor the authors' JSON)")


def execute(spec: RunSpec, progress: bool = False) -> RunResult:
    """Draw (or load) the trace and simulate every policy of the spec."""
    check_spec(spec)
    started = time.perf_counter()
    trace = load_or_draw_trace(spec)
    seconds = {"trace": time.perf_counter() - started}
    lg = LgPerformance.load(Path(spec.lg_table)) if spec.deploys else None
    series = {}
    for policy in spec.policies:
        started = time.perf_counter()
        simulation = FabricSimulation(spec.fabric, trace, policy, spec.constraint, lg,
                                      spec.deploys, spec.choices)
        series[policy] = simulation.run(progress=progress)
        seconds[str(policy)] = time.perf_counter() - started
    return RunResult(spec, trace, series, seconds, peak_rss_mb())


def save(result: RunResult, results_dir: Path) -> Path:
    """Write the run into `results_dir/<run name>/` (replaced whole, or left as it was if a
    write fails) and return that folder."""
    folder = results_dir / result.spec.name
    staging = results_dir / f".{result.spec.name}.{os.getpid()}.tmp"
    try:
        staging.mkdir(parents=True)
        _write_run(result, staging)
        if folder.exists():
            shutil.rmtree(folder)
        staging.rename(folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def _write_run(result: RunResult, folder: Path) -> None:
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


def load(folder: Path) -> RunResult:
    """Read a run folder written by `save`."""
    meta_path = folder / META_FILE
    if not meta_path.is_file():
        raise ValueError(f"not a fabric run folder (no {META_FILE}): {folder}")
    try:
        meta = json.loads(meta_path.read_bytes())
        spec = RunSpec.from_dict(meta["spec"])
        seconds, peak = dict(meta["seconds"]), float(meta["peak_rss_mb"])
    except (ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{meta_path}: not a fabric run's metadata: {error!r}") from None
    series = {}
    for policy in spec.policies:
        path = folder / f"series-{policy}.npz"
        try:
            with np.load(path, allow_pickle=False) as data:
                series[policy] = Series(policy, spec.deploys, **{key: data[key] for key in data})
        except (OSError, ValueError, TypeError, EOFError, zipfile.BadZipFile) as error:
            raise ValueError(f"{path}: not a fabric run's series: {error}") from None
    return RunResult(spec, Trace.load(folder / TRACE_FILE), series, seconds, peak)


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
