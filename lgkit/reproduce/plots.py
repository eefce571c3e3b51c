"""Plots of the stress-test experiments, ours with the paper's values overlaid (the notebooks
call these on a run folder of `lgkit reproduce NAME`)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from lgkit.reproduce import paper

RATES = (25.0, 100.0)
PAPER_STYLE = {"color": "black", "marker": "x", "linestyle": "none", "markersize": 9}


def run_folder(name: str, root: str = "../measurements/runs") -> Path:
    """The run folder to plot: LGKIT_RUN if set, else the newest complete run of `name` under
    LGKIT_RESULTS (or `root`), default scale before quick."""
    if os.environ.get("LGKIT_RUN"):
        return Path(os.environ["LGKIT_RUN"])
    base = Path(os.environ.get("LGKIT_RESULTS", root))
    for scale in ("default", "quick"):
        runs = sorted(base.glob(f"*-{name}-{scale}-builtin*"))
        complete = [r for r in runs if _status(r) == "complete"]
        if complete:
            return complete[-1]
    raise FileNotFoundError(f"no complete run of {name} under {base}: run "
                            f"`lgkit reproduce {name} --quick`")


def _status(folder: Path) -> str:
    try:
        return json.loads((folder / "metadata.json").read_text()).get("status", "")
    except (OSError, ValueError):
        return ""


def load(folder: Path) -> dict[str, Any]:
    """The point summaries of a run (points.json)."""
    return json.loads((folder / "points.json").read_text())


def _points(data: dict[str, Any], **match: Any) -> list[dict[str, Any]]:
    return [p for p in data["points"] if all(p[k] == v for k, v in match.items())]


def fig8(folder: Path) -> Figure:
    """Effective loss (top) and effective link speed (bottom) per loss rate, per link speed."""
    data = load(folder)
    fig, axes = plt.subplots(2, 2, figsize=(10, 7), sharex=True)
    for col, rate in enumerate(RATES):
        top, bottom = axes[0][col], axes[1][col]
        for mode, marker in (("lg", "o"), ("lg_nb", "s")):
            pts = sorted(_points(data, rate_gbps=rate, mode=mode), key=lambda p: p["loss"])
            losses = [p["actual_loss"] for p in pts]
            # an unobserved effective loss is drawn at its 99% upper bound, hollow
            top.plot(losses, [p["effective_loss_high"] for p in pts], marker=marker,
                     fillstyle="none", linestyle=":", label=f"{mode.upper()} 99% upper bound")
            seen = [(p["actual_loss"], p["effective_loss"]) for p in pts if p["lost_onward"]]
            if seen:
                top.plot(*zip(*seen, strict=True), marker=marker, linestyle="none",
                         label=f"{mode.upper()} measured")
            bottom.plot(losses, [p["effective_gbps"] for p in pts], marker=marker,
                        label=mode.upper())
        losses = sorted(paper.THEORY_EFFECTIVE)
        top.plot(losses, [paper.THEORY_EFFECTIVE[x] for x in losses], "k--",
                 label="paper: p^(N+1)")
        top.plot(losses, [paper.TARGET] * 3, color="grey", linewidth=0.8, label="target")
        if rate == 100.0:
            ref = [paper.LG_100G[x] for x in losses]
            top.plot([r[0] for r in ref], [r[1] for r in ref], **PAPER_STYLE, label="paper LG")
            bottom.plot([r[0] for r in ref], [r[2] for r in ref], **PAPER_STYLE,
                        label="paper LG")
        top.set(xscale="log", yscale="log", title=f"{rate:g}G", ylabel="effective loss rate")
        bottom.set(xscale="log", xlabel="actual loss rate (measured)",
                   ylabel="effective link speed (Gb/s)")
        top.legend(fontsize=7)
        bottom.legend(fontsize=7)
    fig.tight_layout()
    return fig


def fig12(folder: Path) -> Figure:
    """Tx and Rx buffer usage as boxes (min, p25, p50, p75, max), the paper's maxima as lines."""
    data = load(folder)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, rate in zip(axes, RATES, strict=True):
        boxes, labels, limits = [], [], []
        for mode in ("lg", "lg_nb"):
            for p in sorted(_points(data, rate_gbps=rate, mode=mode), key=lambda p: p["loss"]):
                for which in ("tx", "rx"):
                    pct = p[f"{which}_buffer"]
                    boxes.append({"whislo": pct["min"] / 1e3, "q1": pct["p25"] / 1e3,
                                  "med": pct["p50"] / 1e3, "q3": pct["p75"] / 1e3,
                                  "whishi": p[f"{which}_max_bytes"] / 1e3, "fliers": []})
                    labels.append(f"{mode.upper()}\n{p['loss']:.0e}\n{which.upper()}")
                    limits.append(paper.BUFFER_MAX_BYTES[(mode, rate)][which] / 1e3)
        ax.bxp(boxes, showfliers=False)
        ax.plot(range(1, len(limits) + 1), limits, **PAPER_STYLE, label="paper max")
        ax.set_xticks(range(1, len(labels) + 1), labels, fontsize=6)
        ax.set(title=f"{rate:g}G", ylabel="buffer (KB)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def fig17(folder: Path) -> Figure:
    """CDF of the retransmission delay per link speed, the paper's maxima as vertical lines."""
    data = load(folder)
    fig, ax = plt.subplots(figsize=(7, 4))
    for rate, color in zip(RATES, ("tab:blue", "tab:orange"), strict=True):
        delays = sorted(d / 1000 for p in _points(data, rate_gbps=rate)
                        for d in p["retx_delays_ns"])
        if delays:
            ax.step(delays, [(i + 1) / len(delays) for i in range(len(delays))], color=color,
                    where="post", label=f"ours {rate:g}G ({len(delays)} recoveries)")
        ax.axvline(paper.MAX_RETX_DELAY_US[rate], color=color, linestyle="--",
                   label=f"paper max {rate:g}G")
        ax.axvline(paper.ACK_NO_TIMEOUT_US[rate], color=color, linestyle=":",
                   label=f"ackNoTimeout {rate:g}G")
    ax.set(xlabel="retransmission delay (us)", ylabel="CDF")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def fig18(folder: Path) -> Figure:
    """Share of loss runs by length (log), i.i.d. and bursty, with the geometric law."""
    data = load(folder)
    fig, ax = plt.subplots(figsize=(7, 4))
    for p in data["points"]:
        runs = {int(k): v for k, v in p["bursts"].items()}
        total = sum(runs.values())
        if not total:
            continue
        lengths = sorted(runs)
        kind = "i.i.d." if p["burst"] == 1.0 else f"GE bursts {p['burst']:g}"
        ax.plot(lengths, [runs[k] / total for k in lengths], marker="o",
                label=f"{p['loss']:.0%} {kind}")
        if p["burst"] == 1.0:
            ks = range(1, 7)
            ax.plot(ks, [(1 - p["loss"]) * p["loss"] ** (k - 1) for k in ks], "k:",
                    linewidth=0.8)
    ax.axvline(paper.CONSECUTIVE_LOSS_COVERAGE[0], color="grey", linestyle="--",
               label="paper: 5 registers")
    ax.set(yscale="log", xlabel="consecutive frames lost", ylabel="share of loss runs")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def table4(folder: Path) -> Figure:
    """Recirculation overhead bars, ours beside the paper's Table 4."""
    data = load(folder)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, side in zip(axes, ("tx", "rx"), strict=True):
        labels, ours, theirs = [], [], []
        for rate in RATES:
            for p in sorted(_points(data, rate_gbps=rate, mode="lg"), key=lambda p: p["loss"]):
                labels.append(f"{rate:g}G\n{p['loss']:.0e}")
                ours.append(p[f"recirc_{side}_pct"])
                theirs.append(paper.RECIRC_OVERHEAD_PCT[(rate, side)][p["loss"]])
        xs = range(len(labels))
        ax.bar([x - 0.2 for x in xs], ours, width=0.4, label="ours")
        ax.bar([x + 0.2 for x in xs], theirs, width=0.4, color="black", label="paper")
        ax.set_xticks(list(xs), labels, fontsize=7)
        ax.set(title="sender (TX)" if side == "tx" else "receiver (RX)",
               ylabel="% of pipeline capacity")
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def save(figure: Figure, path: Path) -> Path:
    """Write a figure as PNG and release it."""
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
