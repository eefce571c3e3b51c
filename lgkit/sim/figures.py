"""The stress-test experiments (Fig. 8, 12, 17, 18, Table 4, ackNo timeouts): their points, and
their tables of our numbers beside the paper's, built from the sweep's point summaries."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from lgkit.sim import paper
from lgkit.sim.stress import StressSpec
from lgkit.sim.sweep import Scale, burst_points, law_points, stress_points

Summary = dict[str, Any]
Cell = float | int | str | None


@dataclass(frozen=True)
class Line:
    """One row: our values and the paper's (empty: the paper has no such row)."""

    label: str
    ours: Sequence[Cell]
    paper: Sequence[Cell] = ()


@dataclass(frozen=True)
class Table:
    """Ours beside the paper's (the shape of lgkit reproduce's comparison tables)."""

    title: str
    columns: Sequence[str]
    lines: Sequence[Line]
    scale: str
    notes: Sequence[str] = ()
    checks: Sequence[tuple[str, bool]] = field(default_factory=tuple)

    def format(self) -> str:
        def cell(v: Cell) -> str:
            if v is None or (isinstance(v, float) and math.isnan(v)):
                return "n/a"
            if isinstance(v, float):
                return f"{v:.3g}"
            return str(v)

        rows = [["", "", *self.columns]]
        for line in self.lines:
            rows.append([line.label, "ours", *map(cell, line.ours)])
            if line.paper:
                rows.append(["", "paper", *map(cell, line.paper)])
        widths = [max(len(r[i]) for r in rows if i < len(r)) for i in range(len(rows[0]))]
        out = [f"== {self.title} ==", f"scale: {self.scale}"]
        for r in rows:
            out.append("  ".join([r[0].ljust(widths[0]), r[1].ljust(widths[1])]
                                 + [c.rjust(w) for c, w in zip(r[2:], widths[2:],
                                                                strict=False)]).rstrip())
        out += [f"note: {n}" for n in self.notes]
        out += [f"check: {text}: {'PASS' if ok else 'FAIL'}" for text, ok in self.checks]
        return "\n".join(out)

    def records(self) -> list[dict[str, Cell]]:
        """One record per (row, column): for the CSV the notebooks read."""
        return [{"table": self.title, "row": line.label, "column": column,
                 "ours": line.ours[i] if i < len(line.ours) else None,
                 "paper": line.paper[i] if i < len(line.paper) else None}
                for line in self.lines for i, column in enumerate(self.columns)]


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


def fig8(points: Sequence[Summary], law: Sequence[Summary], scale: Scale) -> list[Table]:
    lines = []
    for p in points:
        ref = paper.LG_100G.get(p["loss"]) if (p["mode"], p["rate_gbps"]) == ("lg", 100.0) \
            else None
        lines.append(Line(
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
        checks.append((f"LG at 100G 1e-3: link speed {red:.1f}% lower (paper 8%, expected "
                       "3-15%)", 3 <= red <= 15))
        checks.append((f"LG_NB {nb['effective_gbps']:.2f} >= LG {lg['effective_gbps']:.2f} "
                       "Gb/s at 100G 1e-3", nb["effective_gbps"] >= lg["effective_gbps"]))
    main = Table(
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
        law_lines.append(Line(
            f"p {p['loss']:g} N {p['copies']} {p['protected']:,} pkts",
            [p["lost_onward"], expected, p["effective_loss"], p["loss"] ** (p["copies"] + 1)]))
        law_checks.append((f"p={p['loss']:g}: {p['lost_onward']} lost, p^(N+1) expects "
                           f"{expected:.1f}, inside the 99% interval [{low:.1f}, {high:.1f}]",
                           low <= expected <= high))
    law_table = Table("The p^(N+1) law where it is observable (LG_NB, 100G)",
                      ["lost", "expected", "effective", "p^(N+1)"], law_lines,
                      _scale(law, scale), checks=law_checks)
    return [main, law_table]


def fig12(points: Sequence[Summary], scale: Scale) -> list[Table]:
    lines, checks = [], []
    for p in points:
        limits = paper.BUFFER_MAX_BYTES[(p["mode"], p["rate_gbps"])]
        for which in ("tx", "rx"):
            pct = p[f"{which}_buffer"]
            maximum = p[f"{which}_max_bytes"]
            lines.append(Line(f"{_label(p)} {which.upper()}",
                              [pct.get("min"), pct.get("p25"), pct.get("p50"), pct.get("p75"),
                               pct.get("max"), maximum],
                              [None, None, None, None, None, limits[which]]))
    for (mode, rate), limits in paper.BUFFER_MAX_BYTES.items():
        ours = [p for p in points if p["mode"] == mode and p["rate_gbps"] == rate]
        for which in ("tx", "rx"):
            peak = max((p[f"{which}_max_bytes"] for p in ours), default=0)
            checks.append((f"{mode} {rate:g}G {which.upper()} max {peak / 1000:.1f} KB vs the "
                           f"paper's <= {limits[which] / 1000:.1f} KB",
                           peak <= limits[which]))
    return [Table("Fig. 12: Tx and Rx buffer usage (bytes)",
                  ["min", "p25", "p50", "p75", "max(sampled)", "max"], lines,
                  _scale(points, scale),
                  notes=["ours: the P4 program's buffer registers (bytes of Tx copies alive, "
                         "packets in the reordering buffer), sampled every 1 us, and their "
                         "exact maxima; the paper polled the recirculation queue occupancy",
                         "paper: only the maxima are given in the text (§4.5)"],
                  checks=checks)]


def fig17(points: Sequence[Summary], scale: Scale) -> list[Table]:
    lines, checks = [], []
    for p in points:
        d = p["retx_delay_us"]
        lines.append(Line(f"{_label(p)} ({len(p['retx_delays_ns'])})",
                          [d.get("min"), d.get("p50"), d.get("p99"), d.get("max"),
                           p["counters"]["timeouts"]],
                          [None, None, None, paper.MAX_RETX_DELAY_US[p["rate_gbps"]], None]))
    for rate, target in paper.MAX_RETX_DELAY_US.items():
        worst = max((max(p["retx_delays_ns"]) / 1000 for p in points
                     if p["rate_gbps"] == rate and p["retx_delays_ns"]), default=math.nan)
        checks.append((f"{rate:g}G max retransmission delay {worst:.2f} us vs the paper's "
                       f"{target} us (within 20%)", abs(worst / target - 1) <= 0.2))
    return [Table("Fig. 17: retransmission delay (us), loss detection to the retransmission",
                  ["min", "p50", "p99", "max", "timeouts"], lines, _scale(points, scale),
                  notes=["calibrated: pass latency and link delay of TimingModel (docs/vtime.md)"
                         "; ackNoTimeout 8 us at 25G (the paper's 7.5 rounded up), 7 us at "
                         "100G"],
                  checks=checks)]


def fig18(points: Sequence[Summary], scale: Scale) -> list[Table]:
    lines, checks = [], []
    for p in points:
        runs = {int(k): v for k, v in p["bursts"].items()}
        total = sum(runs.values())
        share = [runs.get(k, 0) / total if total else math.nan for k in range(1, 6)]
        beyond = sum(v for k, v in runs.items() if k > 5)
        lines.append(Line(f"{_label(p)} ({total} runs)",
                          [*share, beyond, p["counters"]["timeouts"], p["lost_onward"]]))
        if p["burst"] == 1.0:
            covered = 1 - beyond / total if total else math.nan
            checks.append((f"{p['loss']:g} i.i.d.: {100 * covered:.4f}% of loss runs within 5 "
                           "consecutive losses (paper: 99.9999% at 5%)", covered >= 0.999))
    return [Table("Fig. 18: consecutive losses (share of loss runs of each length)",
                  ["1", "2", "3", "4", "5", ">5", "timeouts", "lost"], lines,
                  _scale(points, scale),
                  notes=["i.i.d.: run length is geometric, P(k) = (1-p) p^(k-1); GE2: "
                         "Gilbert-Elliott with bursts of 2 frames on average"],
                  checks=checks)]


def table4(points: Sequence[Summary], scale: Scale) -> list[Table]:
    lines = []
    for p in points:
        if p["mode"] != "lg":
            continue
        ref = [paper.RECIRC_OVERHEAD_PCT[(p["rate_gbps"], side)][p["loss"]]
               for side in ("tx", "rx")]
        lines.append(Line(_label(p), [p["recirc_tx_pct"], p["recirc_rx_pct"]], ref))
    return [Table("Table 4: recirculation overhead (% of pipeline capacity), LG",
                  ["TX (sender)", "RX (receiver)"], lines, _scale(points, scale),
                  notes=["ours: recirculated packets per second over 1 Gpps (the paper's "
                         "'10 Mpps ~1%' of a pipe); every loop of a Tx copy counts"])]


def timeouts(points: Sequence[Summary], scale: Scale) -> list[Table]:
    lg = [p for p in points if p["mode"] == "lg"]
    events = sum(p["counters"]["loss_events"] for p in lg)
    fired = sum(p["counters"]["timeouts"] for p in lg)
    unrecovered = sum(p["unrecovered_holes"] for p in lg)
    theirs, their_events = paper.TIMEOUTS
    return [Table("ackNo timeouts over the LG points of Fig. 8",
                  ["timeouts", "loss events", "share %", "unrecovered"],
                  [Line("all LG points", [fired, events,
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
    paper: str
    points: Callable[[Scale, int], list[StressSpec]]
    tables: Callable[..., list[Table]]
    extra: Callable[[Scale, int], list[StressSpec]] | None = None


EXPERIMENTS = {
    "fig8": Experiment("fig8", "Fig. 8", stress_points, fig8, law_points),
    "fig12": Experiment("fig12", "Fig. 12", stress_points, fig12),
    "fig17": Experiment("fig17", "Fig. 17", stress_points, fig17),
    "fig18": Experiment("fig18", "Fig. 18", burst_points, fig18),
    "table4": Experiment("table4", "Table 4", stress_points, table4),
    "timeouts": Experiment("timeouts", "§4.1 timeouts", stress_points, timeouts),
}


def run_experiment(name: str, quick: bool, seed: int, results: Any, workers: int = 2,
                   scheduler: str | None = None, progress: bool = True) -> list[Table]:
    """Run (or reuse) an experiment's points, write its tables and points under `results`
    (a folder: points/ cache, NAME.csv, NAME-points.json) and return the tables."""
    import csv
    import json
    from pathlib import Path

    from lgkit.sim.sweep import run_points, scale_for

    experiment = EXPERIMENTS[name]
    scale = scale_for(quick)
    folder = Path(results) / scale.name
    cache = folder / "points"
    points = run_points(experiment.points(scale, seed), cache, workers, scheduler, progress)
    args: list[Any] = [points]
    if experiment.extra is not None:
        args.append(run_points(experiment.extra(scale, seed), cache, workers, scheduler,
                               progress))
    tables = experiment.tables(*args, scale)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}-points.json").write_text(json.dumps(
        {"scale": scale.name, "seed": seed, "points": args[0],
         "extra": args[1] if len(args) > 1 else []}))
    with (folder / f"{name}.csv").open("w", newline="") as out:
        writer = csv.DictWriter(out, ["table", "row", "column", "ours", "paper"])
        writer.writeheader()
        for table in tables:
            writer.writerows(table.records())
    return tables
