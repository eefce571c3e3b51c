"""Plain-text summaries of fabric runs for the command line."""

from __future__ import annotations

from lgkit.fabric.runs import RunResult
from lgkit.fabric.simulate import Policy


def describe_run(result: RunResult) -> str:
    """What was simulated, the CorrOpt vs CorrOpt + LG outcome, baselines and costs."""
    spec, fabric = result.spec, result.spec.fabric
    lines = [
        f"{spec.name}: {fabric.pods} pods x {fabric.tors_per_pod} ToRs, {fabric.planes} planes x "
        f"{fabric.spines_per_plane} spines, {fabric.n_links:,} links; constraint "
        f"{spec.constraint:.0%}; {result.trace.params.days:g} days after a "
        f"{result.trace.params.warmup_days:g}-day warm-up; {len(result.trace):,} onsets",
        f"  model: LG table lookup {spec.choices.lg_lookup}, re-failures {spec.choices.refailure}"
        f", repair draws {spec.choices.repair_draws}",
    ]
    comparisons = result.comparisons()
    if comparisons:
        first = comparisons[0]
        lines.append(
            f"  CorrOpt:              mean total penalty {first.mean_penalty:.3g}, least paths "
            f"per ToR {first.least_paths:.1%}, up to {first.max_corrupting} corrupting links "
            f"left enabled, up to {first.max_disabled} disabled"
        )
    for item in comparisons:
        lines += [
            f"  CorrOpt + LG ({item.deploy:.0%}): mean total penalty {item.mean_penalty_lg:.3g}: "
            f"{item.orders_of_magnitude:.1f} orders of magnitude lower (median gain "
            f"10^{item.median_gain_orders:.1f}; no gain {item.share_without_gain:.0%} of the time)",
            f"    least capacity per pod: decrease mean {100 * item.mean_capacity_decrease:.3f}, "
            f"max {100 * item.max_capacity_decrease:.2f} percentage points (lowest "
            f"{item.least_capacity:.1%} -> {item.least_capacity_lg:.1%})",
        ]
    disable = result.series.get(Policy.DISABLE)
    if disable is not None:
        lines.append(f"  disable-and-repair:   least paths per ToR {disable.least_paths.min():.1%}")
    nothing = result.series.get(Policy.NOTHING)
    if nothing is not None:
        lines.append(f"  do-nothing:           final total penalty {nothing.penalty[-1, 0]:.3g}")
    times = ", ".join(f"{step} {seconds:.1f} s" for step, seconds in result.seconds.items())
    lines.append(f"  wall time: {times}; peak memory {result.peak_rss_mb:.0f} MB")
    return "\n".join(lines)
