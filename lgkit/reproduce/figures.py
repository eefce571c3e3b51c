"""Paper-style figures of `lgkit reproduce` runs, with the paper's values overlaid (notebooks).

A run is found by `find_run(name)`: the folder in $LGKIT_RUN_<NAME> if set, else the newest
complete run of that experiment in measurements/runs/, else the committed reference run in
measurements/reference/<name>/. Every figure says which target and scale produced it.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter

REPO = Path(__file__).resolve().parents[2]
RUNS = REPO / "measurements" / "runs"
REFERENCE = REPO / "measurements" / "reference"
CONDITION_STYLE = {"no loss": ("tab:green", "-"), "loss": ("tab:red", "-"),
                   "LG": ("tab:blue", "-"), "LG_NB": ("tab:orange", "--")}


def find_run(name: str) -> Path:
    """The results folder to draw for experiment `name`."""
    override = os.environ.get(f"LGKIT_RUN_{name.upper()}")
    if override:
        return Path(override)
    candidates = [folder for folder in (RUNS.glob(f"*-{name}-*") if RUNS.exists() else [])
                  if _status(folder / "metadata.json") == "complete"]
    if candidates:
        return max(candidates, key=lambda p: p.stat().st_mtime)
    reference = REFERENCE / name
    if reference.exists():
        return reference
    raise FileNotFoundError(f"no run of {name}: run `lgkit reproduce {name}` first")


def _status(meta: Path) -> str | None:
    """A run's status, None (with a warning naming the file) if its metadata is unreadable."""
    if not meta.exists():
        return None
    try:
        status = json.loads(meta.read_text()).get("status")
    except (OSError, ValueError, AttributeError) as error:
        warnings.warn(f"skipping {meta}: unreadable ({error})", stacklevel=3)
        return None
    return status


def metadata(run: Path) -> dict:
    """A run's metadata.json."""
    return json.loads((Path(run) / "metadata.json").read_text())


def describe(run: Path) -> str:
    """Which experiment, target, scale and date produced a run."""
    meta = metadata(run)
    scale = "quick" if meta.get("quick") else "default"
    return (f"{meta.get('experiment')} ({meta.get('paper')}), {scale} scale on "
            f"{meta.get('target')}, {meta.get('status')}, wall {meta.get('wall_s', '?')} s; "
            f"{meta.get('scale', '')} [{Path(run).name}]")


def _caption(fig: Figure, run: Path) -> None:
    """Which target and scale produced the figure, under it."""
    meta = metadata(run)
    scale = "quick" if meta.get("quick") else "default"
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    links = (f"{meta['link_rate_mbps']} Mb/s links (paper {meta.get('paper_link_gbps', '?')} "
             f"Gb/s); " if "link_rate_mbps" in meta else "")
    fig.text(0.01, 0.005, f"ours: {meta.get('target')}, {scale} scale, {links}{Path(run).name}",
             fontsize=7, color="0.35")


def save(fig: Figure, run: Path, name: str) -> Path:
    """Write the figure as NAME.png: into $LGKIT_FIGURES if set, else next to the run's data,
    except for a committed reference run, whose figures go to measurements/figures/ (so that
    redrawing never changes tracked files by accident)."""
    folder = Path(os.environ.get("LGKIT_FIGURES") or (
        REPO / "measurements" / "figures" if Path(run).resolve().is_relative_to(REFERENCE)
        else run))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    fig.savefig(path, dpi=120, bbox_inches="tight")
    return path


def _table(run: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(Path(run) / f"{name}.csv")


Named = list[tuple[str, Figure]]
"Each figure with the file name (no suffix) it is saved under."


def slug(text: str) -> str:
    """A file-name-safe version of a label."""
    return "".join(c if c.isalnum() else "_" for c in text).strip("_")


def table3(run: Path) -> Named:
    """Goodput share of the link against loss: ours (lines) and the paper's (open markers)."""
    from lgkit.reproduce.table3 import LOSSES, PAPER_GBPS, PAPER_LINK_GBPS

    goodput = _table(run, "goodput")
    link = metadata(run).get("link_rate_mbps", 10.0)
    fig, ax = plt.subplots(figsize=(6.4, 4))
    colors = {"none": "tab:red", "LG": "tab:blue", "LG_NB": "tab:orange", "Wharf": "tab:gray"}
    positions = {loss: i for i, loss in enumerate(LOSSES)}
    for label, color in colors.items():
        paper = [(positions[loss], v / PAPER_LINK_GBPS)
                 for loss, v in zip(LOSSES, PAPER_GBPS[label], strict=True) if v is not None]
        ax.plot(*zip(*paper, strict=True), "o--", mfc="none", color=color, alpha=0.6,
                label=f"{label} (paper)")
        ours = goodput[goodput["label"] == label].sort_values("loss")
        if len(ours):
            ax.plot([positions[x] for x in ours["loss"]], ours["steady_mbps"] / link, "s-",
                    color=color, label=f"{label} (ours)")
    ax.set_xticks(range(len(LOSSES)), [f"{x:g}" for x in LOSSES])
    ax.set_xlabel("corruption loss rate")
    ax.set_ylabel("TCP CUBIC goodput / link rate")
    ax.set_ylim(0, 1.05)
    ax.set_title("Table 3: goodput against loss")
    ax.legend(fontsize=7, ncol=2)
    _caption(fig, run)
    return [("table3", fig)]


def _tail_cdf(ax, values_us: np.ndarray, top: float, norm: float, **style) -> None:
    values = np.sort(values_us) / norm
    if not len(values):
        return
    ranks = np.arange(1, len(values) + 1) / len(values)
    keep = ranks >= 1 - top
    ax.plot(values[keep], ranks[keep], **style)


def fct_tails(run: Path, group: str = "", top: float = 0.01,
              paper_us: Mapping[str, Sequence[float | None]] | None = None,
              paper_quantiles: tuple[float, ...] = ()) -> Figure:
    """The top `top` of the FCT distribution per condition (the paper's Fig. 10/11 style),
    normalised by our no-loss median; the paper's percentiles (normalised by its no-loss p99
    over ours) as markers where it gives them."""
    flows = _table(run, "fct")
    flows = flows[(flows["error"].isna()) & (flows["group"].fillna("") == group)]
    fig, ax = plt.subplots(figsize=(6.4, 4))
    base = flows[flows["condition"] == "no loss"]["fct_us"]
    norm = float(np.median(base)) if len(base) else 1.0
    for condition, part in flows.groupby("condition", sort=False):
        color, line = CONDITION_STYLE.get(condition, ("tab:purple", ":"))
        _tail_cdf(ax, part["fct_us"].to_numpy(), top, norm, color=color, linestyle=line,
                  label=f"{condition} (ours, n={len(part)})")
    paper_p99 = paper_us["no loss"][1] if paper_us else None
    if paper_us and paper_p99 is not None and len(base):
        scale = float(np.quantile(base, 0.99)) / norm / paper_p99
        for condition, values in paper_us.items():
            color, _ = CONDITION_STYLE.get(condition, ("tab:purple", ":"))
            points = [(v * scale, q) for v, q in zip(values, paper_quantiles, strict=True)
                      if v is not None and q >= 1 - top]
            if points:
                ax.plot(*zip(*points, strict=True), "o", mfc="none", color=color,
                        label=f"{condition} (paper)")
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("FCT / our no-loss median")
    ax.set_ylabel("CDF")
    ax.set_ylim(1 - top, 1.0005)
    ax.legend(fontsize=7)
    _caption(fig, run)
    return fig


def fig11(run: Path) -> Named:
    """Top-1% FCT of 143 B flows; the paper's p99.9 gain as text."""
    from lgkit.reproduce.fig11 import PAPER_GAIN_P999

    fig = fct_tails(run, top=0.01)
    ax = fig.axes[0]
    flows = _table(run, "fct")
    flows = flows[flows["error"].isna()]

    def p999(condition: str) -> float:
        values = flows[flows["condition"] == condition]["fct_us"]
        return float(np.quantile(values, 0.999)) if len(values) else float("nan")

    ours = p999("loss") / p999("LG")
    ax.set_title("Fig. 11: top-1% FCT, 143 B flows")
    # the gain as the legend's title, so that the legend can never cover it
    ax.legend(fontsize=7, title_fontsize=7,
              title=f"p99.9 loss / LG: ours {ours:.1f}x, paper {PAPER_GAIN_P999['LG']:g}x")
    return [("fig11", fig)]


def fig10(run: Path) -> Named:
    """Top-5% FCT of 24,387 B flows, one figure per transport (DCTCP overlays Table 2)."""
    from lgkit.reproduce.fig10 import PAPER_DCTCP_US, QUANTILES

    figures = []
    for group in _table(run, "fct")["group"].dropna().unique():
        paper = PAPER_DCTCP_US if group == "dctcp" else None
        fig = fct_tails(run, group, 0.05, paper, QUANTILES)
        fig.axes[0].set_title(f"Fig. 10: top-5% FCT, 24,387 B {group} flows")
        figures.append((f"fig10-{slug(group)}", fig))
    return figures


def table2(run: Path) -> Named:
    """Tail FCT per mechanism, ours and the paper's, each over its own no-loss p99."""
    from lgkit.reproduce.table2 import PAPER_US, QUANTILES

    flows = _table(run, "fct")
    flows = flows[flows["error"].isna()]
    labels = list(PAPER_US)
    base = flows[flows["condition"] == "no loss"]["fct_us"]
    ours_norm = float(np.quantile(base, 0.99)) if len(base) else 1.0
    fig, axes = plt.subplots(1, len(QUANTILES), figsize=(11, 3.6), sharey=True)
    for ax, (i, q) in zip(axes, enumerate(QUANTILES), strict=True):
        ours = [float(np.quantile(flows[flows["condition"] == c]["fct_us"], q)) / ours_norm
                if (flows["condition"] == c).any() else np.nan for c in labels]
        paper = [PAPER_US[c][i] / PAPER_US["no loss"][0] for c in labels]
        x = np.arange(len(labels))
        ax.bar(x - 0.2, ours, 0.4, label="ours", color="tab:blue")
        ax.bar(x + 0.2, paper, 0.4, label="paper", color="tab:gray")
        ax.set_xticks(x, labels, rotation=60, ha="right", fontsize=7)
        ax.set_yscale("log")
        ax.set_title(f"p{q * 100:g}", fontsize=9)
    axes[0].set_ylabel("FCT / no-loss p99")
    axes[0].legend(fontsize=7)
    fig.suptitle("Table 2: what each LinkGuardian mechanism buys (24,387 B flows)")
    _caption(fig, run)
    return [("table2", fig)]


def delivered_mbps(counter_d: pd.DataFrame, window_s: float = 0.5) -> tuple[np.ndarray,
                                                                             np.ndarray]:
    """Throughput the receiver switch delivers (counter D's byte samples): the mean rate over
    the last `window_s` at each sample."""
    t = counter_d["t_s"].to_numpy(dtype=float)
    octets = counter_d["bytes"].to_numpy(dtype=float)
    back = np.searchsorted(t, t - window_s)
    span = t - t[back]
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(span > 0, (octets - octets[back]) * 8 / span / 1e6, np.nan)
    return t, rate


def fig9(run: Path) -> Named:
    """Throughput, queue depth and Rx buffer over time, one figure per run (transport)."""
    from lgkit.reproduce.fig9 import PAPER_RX_BUFFER_KB

    tcp = _table(run, "timeline_tcp")
    polls = _table(run, "timeline_p4")
    events = _table(run, "events")
    link = metadata(run).get("link_rate_mbps", 10.0)
    speed = _table(run, "link_speed")["effective_link_speed"].iloc[-1] \
        if (Path(run) / "link_speed.csv").exists() else None
    figures = []
    for name, part in tcp.groupby("run", sort=False):
        fig, (top, middle, bottom) = plt.subplots(3, 1, figsize=(6.4, 6), sharex=True)
        top.plot(part["t_s"], part["mbps"], color="tab:blue", alpha=0.3, linewidth=0.8,
                 label="iperf3 sender, 0.1 s")
        mine = polls[polls["run"] == name]
        t_d, mbps_d = delivered_mbps(mine[mine["name"] == "lg_cnt_d"])
        top.plot(t_d, mbps_d, color="tab:blue", label="delivered (counter D), 0.5 s mean")
        top.axhline(link, color="0.6", linestyle=":", label="link rate")
        if speed is not None:
            top.axhline(speed * link, color="tab:green", linestyle="--",
                        label="effective link speed (UDP, LG on)")
        top.set_ylabel("Mb/s")
        top.legend(fontsize=7)
        qd = mine[mine["name"] == "lg_qdepth_max"]
        middle.plot(qd["t_s"], qd["value"], color="tab:purple")
        middle.set_ylabel("qdepth (pkts)")
        rx = mine[mine["name"] == "lg_rx_buf_bytes"]
        bottom.plot(rx["t_s"], rx["value"] / 1000, color="tab:orange", label="Rx buffer")
        bottom.axhline(PAPER_RX_BUFFER_KB, color="0.6", linestyle=":",
                       label="paper: <= 60 KB at 25G")
        bottom.set_ylabel("KB")
        bottom.set_xlabel("time (s)")
        bottom.legend(fontsize=7)
        for _, event in events[events["run"] == name].iterrows():
            for ax in (top, middle, bottom):
                ax.axvline(event["t_s"], color="tab:red", linewidth=0.8, alpha=0.5)
            top.text(event["t_s"], top.get_ylim()[1], f" {event['event']}", fontsize=7,
                     va="top", color="tab:red")
        fig.suptitle(f"Fig. 9: {name}")
        _caption(fig, run)
        figures.append((f"fig9-{slug(name)}", fig))
    return figures


def lgrate(run: Path) -> Named:
    """Each probe of the LG link-rate search against its rate: LG's goodput over the no-loss
    flow's and the effective loss, passes filled and failures as crosses."""
    from lgkit.reproduce.lgrate import GOODPUT_SHARE

    probes = _table(run, "probes")
    meta = metadata(run)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6.4, 5), sharex=True)
    for passed, marker, label in ((True, "o", "pass"), (False, "x", "FAIL")):
        part = probes[probes["passed"] == passed]
        top.plot(part["rate_mbps"], part["lg_mbps"] / part["clean_mbps"], marker,
                 color="tab:blue", linestyle="none", label=label)
        bottom.plot(part["rate_mbps"], part["effective_loss"], marker, color="tab:red",
                    linestyle="none", label=label)
    top.axhline(GOODPUT_SHARE, color="0.6", linestyle=":", label="goal: within 10% of no loss")
    top.set_ylabel("LG goodput / no loss")
    top.legend(fontsize=7)
    limit = meta.get("max_effective_loss", 0.0)
    bottom.axhline(limit, color="0.6", linestyle=":", label=f"limit {limit:g}")
    bottom.set_yscale("symlog", linthresh=1e-4)
    bottom.set_ylim(0, max(1e-3, 3 * float(probes["effective_loss"].max())))
    bottom.set_ylabel(f"effective loss at {meta.get('corruption', 0.01):g}")
    bottom.set_xlabel("link rate (Mb/s)")
    bottom.legend(fontsize=7)
    found = [rate for rate in meta.get("highest_rate_mbps", []) if rate]
    for rate in found:
        for ax in (top, bottom):
            ax.axvline(rate, color="tab:green", linewidth=0.8, alpha=0.5)
    fig.suptitle(f"LG link rate at {meta.get('corruption', 0.01):g} corruption "
                 f"({meta.get('target')}): highest {', '.join(f'{r:g}' for r in found)} Mb/s")
    _caption(fig, run)
    return [("lgrate", fig)]
