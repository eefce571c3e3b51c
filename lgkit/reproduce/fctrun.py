"""FCT runs on the testbed: one condition (loss, LG mode, mechanisms) at a time, flows h1 -> h3.

Each condition runs the kit's FCT client in h1 against its server in h3 for a number of flows or
until its share of the time bound ends, whichever comes first; every finished flow goes to the
run's `fct` table with the condition's label, and `fct_summary` gets the tail percentiles with
their 95% confidence intervals.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from lgkit.core import naming
from lgkit.core.argtypes import LOSS_RATE, ranged
from lgkit.core.child import stop_process
from lgkit.measure.metrics import TAIL_QUANTILES, Estimate, percentile_label, tail
from lgkit.measure.results import read_table
from lgkit.reproduce import bed as testbed
from lgkit.reproduce.bed import FCT_PORT, Bed, FctServer
from lgkit.reproduce.context import Context, ReproduceError
from lgkit.reproduce.report import Check, Comparison, Row, ratio

CC_HELP = ("TCP congestion control (default: the paper's DCTCP if the kernel has it, else CUBIC, "
           "said in one line)")
TEARDOWN_RESERVE_S = 25.0
"Time kept back at the end of a run for stopping the network and writing tables."


@dataclass(frozen=True)
class Condition:
    """One line of an FCT figure: corruption, LG mode and LG parameter overrides."""

    label: str
    loss: float
    mode: str = "off"
    overrides: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class FlowSpec:
    """The flows of a run."""

    size: int | None = None
    "Fixed size in bytes, or None to draw from `cdf`."
    cdf: str | None = None
    congestion: str = "cubic"
    persistent: bool = False
    flows: int = 1000
    "Flows per condition at most."

    def describe(self) -> str:
        what = f"{self.size} B" if self.size else f"sizes from {self.cdf}"
        conn = "persistent connections" if self.persistent else "a new connection each"
        return f"{what} {self.congestion} flows h1 -> h3, closed loop, {conn}"


def add_fct_arguments(group: Any, loss: float, flows: int, quick_flows: int,
                      cc_default: str | None = None, cc_help: str = CC_HELP) -> None:
    """The options of every FCT experiment: the testbed's, then loss, flows and transport."""
    testbed.add_testbed_arguments(group, realtime=True)
    group.add_argument("--loss", type=LOSS_RATE, default=loss, help="corruption loss rate")
    group.add_argument("--flows", type=ranged(int, 1, 10_000_000),
                       help=f"flows per condition at most (default "
                                                 f"{flows}, --quick {quick_flows})")
    group.add_argument("--cc", default=cc_default, help=cc_help)


def run_client(ctx: Context, bed: Bed, spec: FlowSpec, label: str, seconds: float,
               bar: Any) -> list[dict[str, str]]:
    """Run the FCT client in h1 for at most `seconds`; returns its flow records."""
    out = ctx.store.path / f"fct-{label.replace(' ', '_').replace('+', '')}.csv"
    argv = [sys.executable, "-m", "lgkit.workloads.fct", "client", "--server", bed.ip("h3"),
            "--port", str(FCT_PORT), "--flows", str(spec.flows), "--congestion",
            spec.congestion, "--seed", str(ctx.seed_for("fct", label)), "--out", str(out),
            "--timeout", "10"]
    argv += ["--size", str(spec.size)] if spec.size else ["--cdf", str(spec.cdf)]
    if spec.persistent:
        argv.append("--persistent")
    client = bed.host("h1")
    proc = client.popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    naming.write_pid("fct", f"{client.name}-client", proc.pid)
    deadline = time.monotonic() + seconds
    counter, done = RowCounter(out), 0
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.5)
            rows = counter.rows()
            bar.update(rows - done)
            done = rows
        stop_process(proc, 5.0, first=signal.SIGINT)  # as Ctrl-C: it writes what it has
        bar.update(counter.rows() - done)
        if proc.returncode != 0:
            raise ReproduceError(f"FCT client failed: {proc.stderr.read()[-300:]}")
    finally:
        naming.pid_file("fct", f"{client.name}-client").unlink(missing_ok=True)
    return read_table(out.parent, out.stem) if out.exists() else []


class RowCounter:
    """Rows appended so far to a CSV file with a header line, counted from the bytes added since
    the last call (the progress bar polls a growing per-flow file; re-reading it whole took
    ~0.5 ms of a CPU per poll at 4000 rows, at the testbed's real-time priority)."""

    def __init__(self, path: Path) -> None:
        self.path, self.offset, self.newlines = path, 0, 0

    def rows(self) -> int:
        if self.path.exists():
            with self.path.open("rb") as handle:
                handle.seek(self.offset)
                added = handle.read()
            self.offset += len(added)
            self.newlines += added.count(b"\n")
        return max(0, self.newlines - 1)


def run_conditions(ctx: Context, bed: Bed, conditions: list[Condition], spec: FlowSpec,
                   group: str = "", budget_s: float | None = None) -> dict[str, np.ndarray]:
    """Every condition in turn, within `budget_s` (default: the rest of the time bound);
    returns the finished flows' FCTs (us) per label."""
    fcts: dict[str, np.ndarray] = {}
    end = time.monotonic() + (budget_s if budget_s is not None else ctx.remaining_s)
    ctx.log(f"{group + ': ' if group else ''}{spec.describe()}, up to {spec.flows} per "
            f"condition: {', '.join(c.label for c in conditions)}")
    with FctServer(bed.host("h3"), spec.congestion), \
            ctx.progress(spec.flows * len(conditions), f"{group} flows".strip(), "flow") as bar:
        for i, cond in enumerate(conditions):
            ctx.check_time(f"condition {cond.label}")
            bed.set_loss(cond.loss)
            params = bed.protect(cond.mode, **cond.overrides)
            before, lg_before = bed.counts(), bed.lg_state(cond.mode)
            left = len(conditions) - i
            seconds = min(ctx.share_s(left, TEARDOWN_RESERVE_S), (end - time.monotonic()) / left)
            rows = run_client(ctx, bed, spec, cond.label, seconds, bar)
            delta = bed.counts() - before
            lg = bed.lg_since(cond.mode, lg_before)
            bed.protect("off")
            bar.update(spec.flows - len(rows))
            ok = [r for r in rows if not r["error"]]
            for row in rows:
                ctx.store.append("fct", {"group": group, "condition": cond.label,
                                         "loss": cond.loss, "mode": cond.mode, **row})
            fcts[cond.label] = np.array([float(r["fct_us"]) for r in ok])
            srtt_ms = float(np.median([float(r["rtt_us"]) for r in ok])) / 1000 if ok else np.nan
            ctx.log(f"{group + ' ' if group else ''}{cond.label}: {len(ok)} flows, FCT p50 "
                    f"{np.median(fcts[cond.label]) / 1000 if ok else np.nan:.2f} ms, TCP srtt p50 "
                    f"{srtt_ms:.2f} ms (base RTT {bed.base_rtt_ms:.2f} ms)"
                    + (f"; LG: {lg['lg_cnt_loss_events']} losses, {lg['lg_cnt_retx']} copies "
                       f"sent, {lg['lg_cnt_timeouts']} timeouts, {lg['lg_cnt_pauses']} pauses, "
                       f"Rx buffer max {lg['lg_rx_buf_max_pkts']} packets" if lg else ""))
            ctx.store.append("conditions", {
                "group": group, "condition": cond.label, "loss": cond.loss,
                "mode": cond.mode, "params": json.dumps(_params(params)),
                "flows": len(ok), "errors": len(rows) - len(ok), "srtt_p50_ms": srtt_ms,
                "link_loss": delta.actual_loss, "effective_loss": delta.effective_loss,
                "frames_on_link": delta.b, "seconds": round(seconds, 1),
                **testbed.lg_columns(lg)})
        bed.set_loss(0.0)
    _merge_summary(ctx, summarize(fcts, group))
    return fcts


def _params(params: Any) -> dict[str, Any]:
    return {} if params is None else asdict(params)


SUMMARY_COLUMNS = ("group", "condition", "flows", "p50_us", "quantile", "value_us", "low_us",
                   "high_us")


def summarize(fcts: dict[str, np.ndarray], group: str) -> list[dict[str, Any]]:
    """Tidy rows: the median and the tail percentiles of each condition with their CIs."""
    rows = []
    for label, values in fcts.items():
        p50 = float(np.median(values)) if len(values) else float("nan")
        for est in tail(values, TAIL_QUANTILES):
            rows.append({"group": group, "condition": label, "flows": est.n, "p50_us": p50,
                         "quantile": est.label, "value_us": est.value, "low_us": est.low,
                         "high_us": est.high})
    return rows


def _merge_summary(ctx: Context, rows: list[dict[str, Any]]) -> None:
    """Add a group's rows to fct_summary (rewritten whole, atomically)."""
    path = ctx.store.path / "fct_summary.csv"
    old = read_table(ctx.store.path, "fct_summary") if path.exists() else []
    ctx.store.write_table("fct_summary", old + rows, SUMMARY_COLUMNS)


def fct_table(title: str, fcts: dict[str, np.ndarray], scale: str,
              paper_us: Mapping[str, Sequence[float | None]] | None = None,
              quantiles: tuple[float, ...] = TAIL_QUANTILES, notes: list[str] | None = None,
              checks: list[Check] | None = None) -> Comparison:
    """Tail FCTs per condition: ours in ms at our scale, the paper's in us where it gives
    them; a percentile the sample cannot bound from above is in parentheses (see
    `unresolved`)."""
    rows = []
    for label, values in fcts.items():
        ours: list[Any] = []
        for est in tail(values, quantiles):
            cell = f"{est.value / 1000:.3g}" if len(values) else None
            ours.append(f"({cell})" if cell and unresolved(est) else cell)
        rows.append(Row(f"{label} (n={len(values)})", ours, (paper_us or {}).get(label, [])))
    columns = [percentile_label(q) for q in quantiles]
    return Comparison(title, columns, rows, scale,
                      units=f"ours: ms; paper: us; {UNRESOLVED_NOTE}",
                      notes=notes or [], checks=checks or [])


UNRESOLVED_NOTE = ("(x): too few flows to bound this percentile: its 95% confidence interval "
                   "reaches past the largest FCT measured (p99.9 needs >= 3,688 flows, p99.99 "
                   ">= 36,887)")


def unresolved(est: Estimate) -> bool:
    """True when the sample cannot bound the percentile from above at its confidence: the
    exact binomial interval's upper order statistic lies beyond the n samples (for p99.9,
    fewer than ln(0.025) / ln(0.999) = 3,688 samples), so the true value may be any higher."""
    return bool(np.isnan(est.high))


def gain_table(title: str, fcts: dict[str, np.ndarray], baseline: str, scale: str,
               paper: Mapping[str, Sequence[float | None]],
               quantiles: tuple[float, ...] = TAIL_QUANTILES,
               notes: list[str] | None = None, checks: list[Check] | None = None) -> Comparison:
    """How many times lower each condition's tail FCT is than `baseline`'s (scale-free, so ours
    and the paper's compare directly)."""
    rows = []
    base = fcts[baseline]
    for label, values in fcts.items():
        if label == baseline or not len(values) or not len(base):
            continue
        ours = [ratio(float(np.quantile(base, q)), float(np.quantile(values, q)))
                for q in quantiles]
        rows.append(Row(f"{baseline} / {label}", ours, paper.get(label, [])))
    columns = [percentile_label(q) for q in quantiles]
    return Comparison(title, columns, rows, scale, units="times lower than " + baseline,
                      notes=notes or [], checks=checks or [])
