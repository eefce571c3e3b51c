"""The stress-test experiments (Fig. 8, 12, 17, 18, Table 4, ackNo timeouts) for `lgkit
reproduce`: their points, and their tables of our numbers beside the paper's, built from the
sweep's point summaries (lgkit/reproduce/<name>.py run them)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lgkit.core.argtypes import host_port, ranged
from lgkit.reproduce import paper
from lgkit.reproduce.context import Context
from lgkit.reproduce.report import Check, Comparison, Row
from lgkit.sim.stress import StressSpec
from lgkit.sim.sweep import (
    Scale,
    burst_points,
    law_points,
    run_points,
    scale_for,
    stress_points,
)

if TYPE_CHECKING:
    from tqdm import tqdm

Summary = dict[str, Any]


def _scale(points: Sequence[Summary], scale: Scale) -> str:
    simulated = sum(p["generated"] for p in points)
    covered = sum(p["covered"] for p in points)
    return (f"virtual time, built-in target, {scale.name}: {len(points)} points, "
            f"{simulated:,} frames simulated, {covered:,} covered (paper: 100M frames per "
            "point on Tofino)")


def _label(p: Summary) -> str:
    mode = "LG" if p["mode"] == "lg" else "LG_NB"
    burst = "" if p["burst"] == 1.0 else f" GE{p['burst']:g}"
    return f"{p['rate_gbps']:g}G {p['loss']:.0e}{burst} {mode}"


def fig8(points: Sequence[Summary], law: Sequence[Summary], scale: Scale) -> list[Comparison]:
    lines = []
    for p in points:
        ref = paper.LG_100G.get(p["loss"]) if (p["mode"], p["rate_gbps"]) == ("lg", 100.0) \
            else None
        lines.append(Row(
            _label(p),
            [p["actual_loss"], p["effective_loss"], p["effective_loss_high"], p["theory_loss"],
             p["effective_gbps"], 100 * p["speed_reduction"]],
            [ref[0], ref[1], None, paper.THEORY_EFFECTIVE[p["loss"]], ref[2],
             100 * (1 - ref[2] / 100)] if ref else
            [p["loss"], None, None, paper.THEORY_EFFECTIVE[p["loss"]], None, None]))
    key = {(p["rate_gbps"], p["loss"], p["mode"]): p for p in points}
    checks = []
    lg, nb = key.get((100.0, 1e-3, "lg")), key.get((100.0, 1e-3, "lg_nb"))
    if lg and nb:
        red = 100 * lg["speed_reduction"]
        checks.append(Check(f"LG at 100G 1e-3: link speed {red:.1f}% lower (paper 8%, expected "
                       "3-15%)", 3 <= red <= 15))
        checks.append(Check(f"LG_NB {nb['effective_gbps']:.2f} >= LG {lg['effective_gbps']:.2f} "
                       "Gb/s at 100G 1e-3", nb["effective_gbps"] >= lg["effective_gbps"]))
    main = Comparison(
        "Fig. 8: actual and effective loss, effective link speed (target 1e-8)",
        ["actual", "effective", "eff. 99% up", "p^(N+1)", "Gb/s", "speed -%"], lines,
        _scale(points, scale),
        notes=["effective: protected packets never delivered / protected packets; 'eff. 99% "
               "up' its exact Poisson upper bound; p^(N+1) with the measured loss rate p",
               "paper LG 100G: the actual and effective rates and Gb/s the authors' simulator "
               "uses (Fig. 8); other cells of the figure are not given in the text",
               "Gb/s counts generator frames (1514 B + 24 B framing) delivered per second; LG's "
               "5-byte header alone caps it at 99.68 Gb/s of 100"],
        checks=checks)
    law_lines = []
    law_checks = []
    for p in law:
        expected = p["protected"] * p["loss"] ** (p["copies"] + 1)
        low = p["effective_loss_low"] * p["protected"]
        high = p["effective_loss_high"] * p["protected"]
        law_lines.append(Row(
            f"p {p['loss']:g} N {p['copies']} {p['protected']:,} pkts",
            [p["lost_onward"], expected, p["effective_loss"], p["loss"] ** (p["copies"] + 1)]))
        law_checks.append(Check(f"p={p['loss']:g}: {p['lost_onward']} lost, p^(N+1) expects "
                           f"{expected:.1f}, inside the 99% interval [{low:.1f}, {high:.1f}]",
                           low <= expected <= high))
    law_table = Comparison("The p^(N+1) law where it is observable (LG_NB, 100G)",
                      ["lost", "expected", "effective", "p^(N+1)"], law_lines,
                      _scale(law, scale), checks=law_checks)
    return [main, law_table]


def fig12(points: Sequence[Summary], scale: Scale) -> list[Comparison]:
    lines, checks = [], []
    for p in points:
        limits = paper.BUFFER_MAX_BYTES[(p["mode"], p["rate_gbps"])]
        for which in ("tx", "rx"):
            pct = p[f"{which}_buffer"]
            lines.append(Row(f"{_label(p)} {which.upper()}",
                              [pct.get("min"), pct.get("p25"), pct.get("p50"), pct.get("p75"),
                               p[f"{which}_max_bytes"], p[f"{which}_alive_max_bytes"]],
                              [None, None, None, None, limits[which], None]))
    for (mode, rate), limits in paper.BUFFER_MAX_BYTES.items():
        ours = [p for p in points if p["mode"] == mode and p["rate_gbps"] == rate]
        for which in ("tx", "rx"):
            peak = max((p[f"{which}_max_bytes"] for p in ours), default=0)
            label = f"{mode} {rate:g}G {which.upper()} max {peak / 1000:.1f} KB vs the paper's"
            if (mode, rate, which) in paper.BUFFER_MEASURED:
                checks.append(Check(f"{label} {limits[which] / 1000:.1f} KB (a measured value: "
                                    "within 20%)", abs(peak / limits[which] - 1) <= 0.2))
            else:
                checks.append(Check(f"{label} <= {limits[which] / 1000:.1f} KB",
                                    peak <= limits[which]))
    return [Comparison("Fig. 12: Tx and Rx buffer usage (bytes)",
                  ["min", "p25", "p50", "p75", "max", "alive max"], lines,
                  _scale(points, scale),
                  notes=["as the paper measured them: the occupancy of the recirculation queue "
                         "the Tx copies (sender) and the reordered packets (receiver) loop "
                         "through, in 80-byte cells, sampled every 1 us; max is the queue's "
                         "watermark (the authors print watermark_cells x 80)",
                         "alive max: the program's own count, the most bytes of Tx copies or "
                         "reordered packets alive at once, queued or not (an upper bound)",
                         "paper: only the maxima are given in the text (§4.5)"],
                  checks=checks)]


def fig17(points: Sequence[Summary], scale: Scale) -> list[Comparison]:
    lines, checks = [], []
    for p in points:
        d = p["retx_delay_us"]
        lines.append(Row(f"{_label(p)} ({len(p['retx_delays_ns'])})",
                          [d.get("min"), d.get("p50"), d.get("p99"), d.get("max"),
                           p["counters"]["timeouts"]],
                          [None, None, None, paper.MAX_RETX_DELAY_US[p["rate_gbps"]], None]))
    for rate, target in paper.MAX_RETX_DELAY_US.items():
        delays = [d for p in points if p["rate_gbps"] == rate for d in p["retx_delays_ns"]]
        worst = max(delays, default=math.nan) / 1000
        checks.append(Check(f"{rate:g}G max retransmission delay {worst:.2f} us over "
                            f"{len(delays)} recoveries vs the paper's {target} us over ~1M "
                            "(within 20%)", abs(worst / target - 1) <= 0.2))
    return [Comparison("Fig. 17: retransmission delay (us), loss detection to the retransmission",
                  ["min", "p50", "p99", "max", "timeouts"], lines, _scale(points, scale),
                  notes=["calibrated: TimingModel's latencies (docs/vtime.md); ackNoTimeout 8 us "
                         "at 25G (the paper's 7.5 rounded up), 7 us at 100G",
                         "as the authors' receiver, only a detection's first lost packet counts; "
                         "the paper's maxima are over ~1M recoveries, ours over these points'"],
                  checks=checks)]


def fig18(points: Sequence[Summary], scale: Scale) -> list[Comparison]:
    lines, checks = [], []
    for p in points:
        runs = {int(k): v for k, v in p["bursts"].items()}
        total = sum(runs.values())
        share = [runs.get(k, 0) / total if total else math.nan for k in range(1, 6)]
        beyond = sum(v for k, v in runs.items() if k > 5)
        lines.append(Row(f"{_label(p)} ({total} runs)",
                          [*share, beyond, p["counters"]["timeouts"], p["lost_onward"]]))
        if p["burst"] == 1.0:
            covered = 1 - beyond / total if total else math.nan
            checks.append(Check(f"{p['loss']:g} i.i.d.: {100 * covered:.4f}% of loss runs within 5 "
                           "consecutive losses (paper: 99.9999% at 5%)", covered >= 0.999))
    return [Comparison("Fig. 18: consecutive losses (share of loss runs of each length)",
                  ["1", "2", "3", "4", "5", ">5", "timeouts", "lost"], lines,
                  _scale(points, scale),
                  notes=["i.i.d.: run length is geometric, P(k) = (1-p) p^(k-1); GE2: "
                         "Gilbert-Elliott with bursts of 2 frames on average"],
                  checks=checks)]


def table4(points: Sequence[Summary], scale: Scale) -> list[Comparison]:
    lines = []
    for p in points:
        if p["mode"] != "lg":
            continue
        ref = [paper.RECIRC_OVERHEAD_PCT[(p["rate_gbps"], side)][p["loss"]]
               for side in ("tx", "rx")]
        lines.append(Row(_label(p), [p["recirc_tx_pct"], p["recirc_rx_pct"]], ref))
    return [Comparison("Table 4: recirculation overhead (% of pipeline capacity), LG",
                  ["TX (sender)", "RX (receiver)"], lines, _scale(points, scale),
                  notes=["ours: packets per second looping through the recirculation port (the "
                         "Tx copies' loops, the reordering buffer's), over a Tofino pipe's "
                         "1.2 Gpps; the Tx copies' first pass through the internal port their "
                         "mirror session feeds is not counted (docs/vtime.md)"])]


def timeouts(points: Sequence[Summary], scale: Scale) -> list[Comparison]:
    lg = [p for p in points if p["mode"] == "lg"]
    events = sum(p["counters"]["loss_events"] for p in lg)
    fired = sum(p["counters"]["timeouts"] for p in lg)
    unrecovered = sum(p["unrecovered_holes"] for p in lg)
    theirs, their_events = paper.TIMEOUTS
    return [Comparison("ackNo timeouts over the LG points of Fig. 8",
                  ["timeouts", "loss events", "share %", "unrecovered"],
                  [Row("all LG points", [fired, events,
                                          100 * fired / events if events else math.nan,
                                          unrecovered],
                        [theirs, their_events, 100 * theirs / their_events, None])],
                  _scale(lg, scale),
                  notes=["a timeout fires when the original and all N copies are lost "
                         "(unrecovered) or a recovery is slower than the ackNoTimeout"])]


@dataclass(frozen=True)
class Experiment:
    """One experiment: which points it needs and how it tabulates them."""

    name: str
    points: Callable[[Scale, int], list[StressSpec]]
    tables: Callable[..., list[Comparison]]
    extra: Callable[[Scale, int], list[StressSpec]] | None = None


MAX_WORKERS = 64
EXPERIMENTS = {
    "fig8": Experiment("fig8", stress_points, fig8, law_points),
    "fig12": Experiment("fig12", stress_points, fig12),
    "fig17": Experiment("fig17", stress_points, fig17),
    "fig18": Experiment("fig18", burst_points, fig18),
    "table4": Experiment("table4", stress_points, table4),
    "timeouts": Experiment("timeouts", stress_points, timeouts),
}


def add_arguments(group: Any) -> None:
    """The options every stress-test experiment adds to `lgkit reproduce NAME`."""
    group.add_argument("--workers", type=ranged(int, 1, MAX_WORKERS), default=2,
                       help="local worker processes for the points (2; 1 = this process)")
    group.add_argument("--scheduler", type=host_port, default=None,
                       help="a Dask scheduler address to run the points on instead")
    group.add_argument("--no-cache", action="store_true",
                       help="rerun every point (by default points already run with the same "
                            "spec and code are reused from the results root's vtime-points/)")


def _point_done(ctx: Context, bar: tqdm) -> None:
    """A stress point has finished: advance the bar, stop at the time bound."""
    bar.update(1)
    ctx.check_time("a stress point")


def run(name: str, ctx: Context) -> list[Comparison]:
    """Run (or reuse) an experiment's points, keep their summaries in the run's folder
    (points.json) and return its tables."""
    import json

    experiment = EXPERIMENTS[name]
    scale = scale_for(ctx.quick)
    options = ctx.options
    workers = getattr(options, "workers", 2)
    cache = None if getattr(options, "no_cache", False) else \
        Path(ctx.store.path).parent / "vtime-points" / scale.name
    ctx.note(scale=scale.name, timing="lgkit.sim.timing.TimingModel defaults",
             frames_1e3=scale.frames_1e3, covered_1e4=scale.covered_1e4,
             covered_1e5=scale.covered_1e5, max_gap=scale.max_gap)
    sets = [experiment.points(scale, ctx.seed)]
    if experiment.extra is not None:
        sets.append(experiment.extra(scale, ctx.seed))
    summaries = []
    for specs in sets:
        with ctx.progress(len(specs), f"{len(specs)} stress points", "point") as bar:
            summaries.append(run_points(specs, cache, workers, getattr(options, "scheduler",
                                                                       None),
                                        on_done=partial(_point_done, ctx, bar)))
    (Path(ctx.store.path) / "points.json").write_text(json.dumps(
        {"experiment": name, "scale": scale.name, "seed": ctx.seed, "points": summaries[0],
         "extra": summaries[1] if len(summaries) > 1 else []}))
    ctx.store.write_table("points", [_flat(p) for s in summaries for p in s])
    return experiment.tables(*summaries, scale)


def _flat(p: Summary) -> dict[str, Any]:
    """A point summary's scalar fields (the points.csv table)."""
    return {k: v for k, v in p.items() if not isinstance(v, (dict, list))}
