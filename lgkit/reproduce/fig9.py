"""Fig. 9 (and App. B.3's Fig. 19): one long TCP flow over the protected link; corruption starts
at 2 s and LinkGuardian about 5 s later. Throughput, the sender switch's queue depth and the
receiver's reordering (Rx) buffer over time, for CUBIC, BBR and DCTCP, and Fig. 9b: the same
with LG's backpressure turned off (pauseThreshold 0).

Throughput comes from iperf3's 0.1 s intervals and from counter D (delivered by the receiver);
queue depth (lg_qdepth_max, packets) and the Tx/Rx buffers are polled every 0.1 s. The effective
link speed line is measured separately, as the paper does, with line-rate UDP through the link
with LG on at the same loss.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from lgkit.core import naming
from lgkit.core.argtypes import LOSS_RATE, SECONDS
from lgkit.core.child import stop_process
from lgkit.measure.p4poll import P4Poller
from lgkit.measure.wirecap import (
    RetxDelays,
    WireCapture,
    lg_data_frames,
    read_pcap,
    retransmission_delays,
)
from lgkit.net.testbed.testbed import HOST_SHARE
from lgkit.reproduce import bed as testbed
from lgkit.reproduce.bed import Bed
from lgkit.reproduce.context import Context, ReproduceError
from lgkit.reproduce.report import Comparison, Row
from lgkit.workloads.iperf import IperfServer, TcpFlow, TcpResult

PAPER_LINK_GBPS = 25.0
PAPER_RX_BUFFER_KB = 60.0
"§4.5: at 25G the Rx buffer stays at or below 60 KB."
POLL_S = 0.1
UDP_PORT = 5400


def add_arguments(group: Any) -> None:
    testbed.add_testbed_arguments(group)
    group.add_argument("--loss", type=LOSS_RATE, default=1e-3, help="corruption loss rate")
    group.add_argument("--seconds", type=SECONDS,
                       help="length of each run (default 16 s, --quick 6 s)")
    group.add_argument("--cc", default="dctcp,cubic,bbr",
                       help="transports, comma-separated (default: the paper's three)")


EXPECTED = testbed.EXPECTED


def preflight(options: argparse.Namespace) -> str | None:
    return testbed.preflight(options.target)


def _schedule(seconds: float) -> tuple[float, float]:
    """(corruption on, LG on): the paper's 2 s and 2 + 5 s, compressed for short runs."""
    if seconds >= 12:
        return 2.0, 7.0
    return seconds / 6, seconds / 2


def run(ctx: Context) -> list[Comparison]:
    options = ctx.options
    seconds = options.seconds or (6.0 if ctx.quick else 16.0)
    wanted = [cc.strip() for cc in options.cc.split(",") if cc.strip()]
    runs: list[tuple[str, str, dict[str, Any]]] = [
        (cc, cc, {}) for cc in wanted if testbed.congestion_or_skip(cc, ctx.log)]
    if ctx.quick:
        runs = runs[:1]
    paper_9b = testbed.paper_congestion(None, "dctcp", "cubic", ctx.log)
    if not ctx.quick:
        runs.append((f"{paper_9b} no backpressure", paper_9b, {"pause_bytes": 0}))
    if not runs:
        raise ReproduceError(f"none of the transports {', '.join(wanted)} is in this kernel")
    at_loss, at_lg = _schedule(seconds)
    ctx.note(loss=options.loss, seconds=seconds, corruption_at_s=at_loss, lg_at_s=at_lg,
             runs=[name for name, _, _ in runs])
    summaries = []
    with Bed(ctx) as bed:
        bed.start(ecn=any(cc == "dctcp" for _, cc, _ in runs), paper_link_gbps=PAPER_LINK_GBPS)
        with ctx.progress(len(runs) + 1, "runs", "run") as bar:
            for name, cc, overrides in runs:
                ctx.check_time(name)
                summaries.append(_timeline(ctx, bed, name, cc, overrides, seconds, at_loss,
                                           at_lg))
                bar.update()
            speed, delays = _effective_link_speed(ctx, bed, min(5.0, seconds / 2))
            bar.update()
        scale = f"{bed.scale()}; loss {options.loss:g} (paper 1e-3)"
    return [_table(summaries, speed, scale, at_loss, at_lg, delays)]


def _timeline(ctx: Context, bed: Bed, name: str, cc: str, overrides: dict[str, Any],
              seconds: float, at_loss: float, at_lg: float) -> dict[str, Any]:
    """One run: a flow for `seconds`, corruption on at `at_loss`, LG on at `at_lg`."""
    loss = ctx.options.loss
    events: list[tuple[float, Callable[[], Any]]] = [
        (at_loss, lambda: bed.set_loss(loss)),
        (at_lg, lambda: bed.protect("lg", **overrides)),
    ]
    poller = P4Poller(ctx.store, "timeline_p4", bed.readers(), bed.lg_cells(), POLL_S,
                      labels={"run": name})
    with IperfServer(bed.host("h3")), poller:
        flow = TcpFlow(bed.host("h1"), bed.ip("h3"), seconds, cc, interval_s=POLL_S).start()
        began = time.monotonic()
        for at, action in events:
            time.sleep(max(0.0, began + at - time.monotonic()))
            action()
            ctx.store.append("events", {"run": name, "t_s": round(time.monotonic() - began, 3),
                                        "event": "corruption on" if at == at_loss else "LG on"})
        result = flow.wait()
    bed.protect("off")
    bed.set_loss(0.0)
    for interval in result.intervals:
        ctx.store.append("timeline_tcp", {"run": name, "congestion": cc,
                                          "t_s": interval.end_s, "mbps": interval.mbps,
                                          "retransmits": interval.retransmits})
    return _summary(ctx, name, result, at_loss, at_lg, bed.rate_mbps)


def _summary(ctx: Context, name: str, result: TcpResult, at_loss: float, at_lg: float,
             link: float) -> dict[str, Any]:
    def phase(lo: float, hi: float) -> tuple[float, int]:
        part = [i for i in result.intervals if lo <= i.start_s and i.end_s <= hi]
        mean = float(np.mean([i.mbps for i in part])) / link if part else float("nan")
        return mean, sum(i.retransmits for i in part)

    end = result.intervals[-1].end_s if result.intervals else 0.0
    before, _ = phase(0.5, at_loss)
    lossy, retx_loss = phase(at_loss, at_lg)
    protected, retx_lg = phase(at_lg + 0.5, end)
    polls = [r for r in _rows(ctx, "timeline_p4") if r["run"] == name]
    qdepth = max((int(r["value"]) for r in polls if r["name"] == "lg_qdepth_max"), default=0)
    rx_kb = max((int(r["value"]) for r in polls if r["name"] == "lg_rx_buf_bytes"),
                default=0) / 1000
    return {"run": name, "before": before, "loss": lossy, "lg": protected,
            "retx_loss": retx_loss, "retx_lg": retx_lg, "qdepth": qdepth, "rx_kb": rx_kb}


def _rows(ctx: Context, table: str) -> list[dict[str, str]]:
    from lgkit.measure.results import read_table

    return read_table(ctx.store.path, table)


def _effective_link_speed(ctx: Context, bed: Bed, seconds: float) -> tuple[float, RetxDelays]:
    """UDP at the hosts' full rate h1 -> h3 with LG on at the run's loss: the delivered share
    of the link rate, and the retransmission delays seen on the wire before the receiver."""
    bed.set_loss(ctx.options.loss)
    bed.protect("lg")
    pcap = ctx.store.path / "wire.pcap"
    capture = WireCapture(bed.testbed.network.wire_ports().toward_receiver, pcap)
    receiver = bed.host("h3").popen(
        [sys.executable, "-m", "lgkit.workloads.udpstress", "recv", "--port", str(UDP_PORT),
         "--seconds", str(seconds + 10)], stdout=subprocess.PIPE, text=True)
    naming.write_pid("udpstress", "h3", receiver.pid)
    try:
        with capture:
            time.sleep(0.5)
            sender = bed.host("h1").popen(
                [sys.executable, "-m", "lgkit.workloads.udpstress", "send", "--dest",
                 bed.ip("h3"), "--port", str(UDP_PORT), "--mbps",
                 f"{bed.rate_mbps * HOST_SHARE:g}", "--seconds", f"{seconds:g}"],
                stdout=subprocess.PIPE, text=True)
            sent = json.loads(sender.communicate(timeout=seconds + 30)[0])
            report = json.loads(receiver.communicate(timeout=20)[0])
    finally:  # the receiver has reported, or the run failed: no report to wait for
        stop_process(receiver, 5.0, naming.pid_file("udpstress", "h3"), first=signal.SIGKILL)
    bed.protect("off")
    bed.set_loss(0.0)
    wire_mbps = report["goodput_mbps"] * 1500 / 1472  # IP packets, as the link carries them
    speed = wire_mbps / bed.rate_mbps
    delays = retransmission_delays(lg_data_frames(read_pcap(pcap))) if pcap.exists() \
        else RetxDelays([], 0)
    ctx.store.append("link_speed", {**sent, **report, "effective_link_speed": speed,
                                    "host_share": HOST_SHARE})
    ctx.store.write_table("retx_delay", [{"delay_us": d} for d in delays.delays_us],
                          ["delay_us"])
    return speed, delays


def _table(summaries: list[dict[str, Any]], speed: float, scale: str, at_loss: float,
           at_lg: float, delays: RetxDelays) -> Comparison:
    columns = ["before", "loss", "LG on", "retx loss", "retx LG", "qdepth max",
               "Rx buf max KB"]
    rows = [Row(s["run"], [s["before"], s["loss"], s["lg"], s["retx_loss"], s["retx_lg"],
                           s["qdepth"], s["rx_kb"]],
                [None, None, None, None, None, None, PAPER_RX_BUFFER_KB])
            for s in summaries]
    rows.append(Row("UDP (link speed)", [None, None, speed, None, None, None, None]))
    d = np.array(delays.delays_us) / 1000
    delay = (f"retransmission delay on the wire (UDP run, n={len(d)}): median "
             f"{np.median(d):.2f} ms, max {d.max():.2f} ms; {delays.unrecovered} never "
             f"retransmitted (paper: max 6 us at 25G)" if len(d) else
             "no retransmission seen on the wire during the UDP run")
    return Comparison(
        f"Fig. 9: TCP over the protected link, corruption at {at_loss:g} s, LG at {at_lg:g} s",
        columns, rows, scale,
        units="throughput: share of the link rate in each phase (iperf3 0.1 s intervals); "
              "retransmissions per phase; queue depth in packets at the LG sender's port",
        notes=[f"UDP link speed: hosts send at {HOST_SHARE:.0%} of the link rate (the "
               "testbed's headroom), so it cannot exceed that share",
               delay,
               "paper (DCTCP, 25G): throughput drops sharply under loss and returns to the "
               "effective link speed with LG; without backpressure the Rx buffer overflows and "
               "end-to-end retransmissions return (Fig. 9b)"])
