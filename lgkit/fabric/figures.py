"""Fig. 13 (one-week snapshot) and Fig. 14 (CDFs over the year) from a results folder."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from lgkit.fabric import runs
from lgkit.fabric.metrics import capacity_decrease, penalty_gain, row_weights, weighted_cdf
from lgkit.fabric.runs import RunResult
from lgkit.fabric.simulate import Policy
from lgkit.fabric.trace import HOURS_PER_DAY
from lgkit.sw.atomic_file import atomic_file


def load_corropt_runs(results_dir: Path) -> dict[float, list[RunResult]]:
    """Runs with a CorrOpt series and a LinkGuardian variant, grouped by constraint."""
    grouped: dict[float, list[RunResult]] = defaultdict(list)
    for folder in runs.find_runs(results_dir):
        result = runs.load(folder)
        if Policy.CORROPT in result.series and result.spec.deploys:
            grouped[result.spec.constraint].append(result)
    if not grouped:
        raise ValueError(f"no CorrOpt runs with LinkGuardian in {results_dir}")
    return dict(sorted(grouped.items()))


def full_deploy_variant(result: RunResult) -> int:
    """Index of the largest LinkGuardian deployment share of a run."""
    return 1 + int(np.argmax(result.spec.deploys))


def _label(result: RunResult, variant: int) -> str:
    return f"CorrOpt + LG ({result.spec.deploys[variant - 1]:.0%} deployed)"


def fig13(results_dir: Path, week_start_day: float | None = None) -> Figure:
    """Total penalty, least paths per ToR and least pod capacity over one week, per constraint."""
    grouped = load_corropt_runs(results_dir)
    figure, axes = plt.subplots(3, len(grouped), figsize=(5.5 * len(grouped), 8), sharex="col",
                                squeeze=False)
    for column, (constraint, results) in enumerate(grouped.items()):
        result = results[0]
        series = result.series[Policy.CORROPT]
        variant = full_deploy_variant(result)
        start = result.trace.params.warmup_days if week_start_day is None else week_start_day
        days = series.time_h / HOURS_PER_DAY
        shown = (days >= start) & (days <= start + 7)
        penalty, paths, capacity = axes[:, column]
        penalty.step(days[shown], series.penalty[shown, 0], where="post", label="CorrOpt")
        penalty.step(days[shown], series.penalty[shown, variant], where="post",
                     label=_label(result, variant))
        penalty.set_yscale("log")
        penalty.set_title(f"capacity constraint {constraint:.0%} (seed {result.spec.trace.seed})")
        paths.step(days[shown], 100 * series.least_paths[shown], where="post", color="C2")
        paths.axhline(100 * constraint, color="grey", linestyle=":", label="constraint")
        capacity.step(days[shown], 100 * series.least_capacity[shown, 0], where="post",
                      label="CorrOpt")
        capacity.step(days[shown], 100 * series.least_capacity[shown, variant], where="post",
                      label=_label(result, variant))
        penalty.set_ylabel("total penalty")
        paths.set_ylabel("least paths per ToR (%)")
        capacity.set_ylabel("least capacity per pod (%)")
        capacity.set_xlabel("time (days)")
        penalty.legend(fontsize="small")
        paths.legend(fontsize="small")
    figure.suptitle(f"{_fabric_title(next(iter(grouped.values()))[0])}: one-week snapshot")
    figure.tight_layout()
    return figure


def fig14(results_dir: Path) -> Figure:
    """CDFs over the measured period: (a) penalty gain, (b) decrease in least pod capacity."""
    grouped = load_corropt_runs(results_dir)
    figure, (gain_axis, capacity_axis) = plt.subplots(1, 2, figsize=(11, 4))
    for constraint, results in grouped.items():
        gains, decreases, weights = [], [], []
        for result in results:
            series = result.series[Policy.CORROPT]
            variant = full_deploy_variant(result)
            gains.append(penalty_gain(series, variant))
            decreases.append(100 * capacity_decrease(series, variant))
            weights.append(row_weights(series.time_h, *result.window))
        label = f"{constraint:.0%} constraint ({len(results)} seed{'s' * (len(results) > 1)})"
        gain_axis.step(*weighted_cdf(np.concatenate(gains), np.concatenate(weights)),
                       where="post", label=label)
        capacity_axis.step(*weighted_cdf(np.concatenate(decreases), np.concatenate(weights)),
                           where="post", label=label)
    gain_axis.set_xscale("log")
    gain_axis.set_xlabel("gain in total penalty (CorrOpt / CorrOpt + LG)")
    capacity_axis.set_xlabel("decrease in least capacity per pod (percentage points)")
    for axis, tag in ((gain_axis, "(a)"), (capacity_axis, "(b)")):
        axis.set_ylabel("CDF (share of time)")
        axis.set_title(tag)
        axis.grid(alpha=0.3)
        axis.legend(fontsize="small")
    figure.suptitle(_fabric_title(next(iter(grouped.values()))[0]))
    figure.tight_layout()
    return figure


def _fabric_title(result: RunResult) -> str:
    fabric = result.spec.fabric
    return (f"{fabric.name}: {fabric.pods} pods x {fabric.tors_per_pod} ToRs, "
            f"{fabric.n_links:,} links, {result.trace.params.days:g} days")


def save_figure(figure: Figure, path: Path) -> Path:
    """Write a figure as PNG and release it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with atomic_file(path, binary=True) as handle:
            figure.savefig(handle, format="png", dpi=120)
    finally:
        plt.close(figure)
    return path
