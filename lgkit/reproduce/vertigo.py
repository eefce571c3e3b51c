"""Vertigo's headline comparison (paper §4.2, Fig. 6 with TCP): incast query and flow
completion times under ECMP, DRILL, DIBS and Vertigo on a leaf-spine, in Mininet."""

from __future__ import annotations

import argparse
import math
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from lgkit.core import naming
from lgkit.core.argtypes import RATE_MBPS, SHARE, ranged
from lgkit.core.child import stop_process
from lgkit.core.targets import Builtin
from lgkit.core.targets import preflight as net_preflight
from lgkit.measure.metrics import quantile_ci, tail
from lgkit.measure.results import read_table
from lgkit.measure.tcpstats import host_runner, nstat, nstat_delta
from lgkit.reproduce.context import Context, ReproduceError
from lgkit.reproduce.report import Check, Comparison, Row, ratio
from lgkit.schemes.nfqueue_stats import QueueSampler, read_queues
from lgkit.schemes.vertigo_control import Buffer
from lgkit.schemes.vertigo_testbed import FLOW_PORT, QUERY_PORT, VertigoBed
from lgkit.workloads.hostconfig import HostConfigError, HostSettings

SCHEMES = ("ecmp", "drill", "dibs", "vertigo")
QUICK_SCHEMES = ("ecmp", "vertigo")
PAPER_QCT_GAIN = {"ecmp": 3.5, "drill": 3.3, "dibs": 5.0}
"Abstract and §1: Vertigo's mean incast QCT is this many times lower (TCP, 85% load)."
PAPER_FCT_P99_GAIN_ECMP = 3.0
"§6: 3x lower 99th-percentile FCT than DCTCP+ECMP."
TEARDOWN_RESERVE_S = 30.0
QUICK_SCHEME_S = 15.0
"--quick: each scheme's share of traffic (about 5 s of queries per aggregator, then counters)."
PING_RTT = r"rtt min/avg/max/mdev = ([\d.]+)/"
DEFAULT_SCALE_RATE_MBPS = {Builtin.name: 5.0}
"""Default host link rate per target at default scale (else the target's): on the built-in
target, at its usual 10 Mb/s the six software switches, sixteen host agents and the workload
need more than this 2-core machine has under Vertigo, and packets wait seconds in the switches'
receive buffers (docs/vertigo.md)."""
EXPECTED = (HostConfigError,)
"Errors the runner reports in one line (a host that cannot be set up, an agent not built)."
QPS_PER_MBPS = 0.1
"Default incast queries per second per aggregator, per Mb/s of host link (1 at 10 Mb/s)."


def add_arguments(group: argparse._ArgumentGroup) -> None:
    """The workload and the scale."""
    group.add_argument("--schemes", help=f"comma-separated, from {', '.join(SCHEMES)} "
                       f"(default: all; --quick: {', '.join(QUICK_SCHEMES)})")
    group.add_argument("--rate-mbps", type=RATE_MBPS,
                       help="host link rate (default: "
                            f"{DEFAULT_SCALE_RATE_MBPS[Builtin.name]:g} on the built-in "
                            "target at default scale, else the target's)")
    group.add_argument("--fanin", type=ranged(int, 1, 1000), default=12,
                       help="servers per incast query")
    group.add_argument("--reply-kb", type=ranged(float, 0.0, 1e6, above=True), default=20.0,
                       help="bytes each server sends")
    group.add_argument("--qps", type=ranged(float, 0.0, 1e6, above=True),
                       help="incast queries per second, per aggregator (h13-h16; default "
                            f"{QPS_PER_MBPS:g} per Mb/s of host link, the same share of it at "
                            "any rate)")
    group.add_argument("--background", type=SHARE,
                       help="web-search background load per host, 0..1 (default 0.3; "
                            "--quick: 0)")
    group.add_argument("--buffer", type=ranged(int, 1, 1_000_000), default=32,
                       help="packets per switch port")
    group.add_argument("--agent", choices=("auto", "c", "python"), default="auto",
                       help="Vertigo's host agents: C (built on first use) or Python (auto: "
                            "C if it builds)")


def preflight(options: argparse.Namespace) -> str | None:
    """Root, Mininet's tools, iptables (the host agents' NFQUEUE rules) and nstat."""
    return net_preflight(options.target, "iptables", "nstat", "ping")


def _schemes(ctx: Context) -> list[str]:
    text = ctx.options.schemes or ",".join(QUICK_SCHEMES if ctx.quick else SCHEMES)
    chosen = [s.strip() for s in text.split(",") if s.strip()]
    unknown = [s for s in chosen if s not in SCHEMES]
    if unknown or not chosen:
        raise ReproduceError(f"--schemes: choose from {', '.join(SCHEMES)} (got {text!r})")
    return chosen


def run(ctx: Context) -> list[Comparison]:
    """One network; each scheme in turn runs the incast queries over the background load."""
    options = ctx.options
    schemes = _schemes(ctx)
    background = options.background if options.background is not None else (
        0.0 if ctx.quick else 0.3)
    rate = options.rate_mbps
    if rate is None and not ctx.quick:
        rate = DEFAULT_SCALE_RATE_MBPS.get(ctx.target)
    bed = VertigoBed(ctx.store.path, ctx.target, rate,
                     Buffer(options.buffer, options.buffer // 2), log=ctx.log)
    try:
        bed.start(HostSettings(rto_min_ms=200))
        qps = options.qps if options.qps is not None else QPS_PER_MBPS * bed.p4_rate_mbps()
        workload = Workload(ctx, bed, options.fanin, round(options.reply_kb * 1000), qps,
                            background)
        workload.calibrate()
        results = {}
        with ctx.progress(len(schemes), "schemes", "scheme") as bar:
            for index, scheme in enumerate(schemes):
                ctx.check_time(f"scheme {scheme}")
                seconds = ctx.share_s(len(schemes) - index, TEARDOWN_RESERVE_S)
                if ctx.quick:
                    seconds = min(seconds, QUICK_SCHEME_S)
                results[scheme] = workload.run(scheme, seconds)
                bar.update()
    finally:
        bed.stop()
    return _tables(ctx, workload, results)


class Workload:
    """Incast queries from the aggregators (h13-h16) to the senders of the other leaves, over
    web-search background flows between random host pairs."""

    def __init__(self, ctx: Context, bed: VertigoBed, fanin: int, reply_bytes: int,
                 qps: float, background: float) -> None:
        self.ctx, self.bed = ctx, bed
        self.fanin, self.reply_bytes, self.qps, self.background = (fanin, reply_bytes, qps,
                                                                     background)
        self.aggregators = bed.spec.receivers
        self.responders = bed.spec.senders
        if not 1 <= fanin <= len(self.responders):
            raise ReproduceError(f"--fanin must be 1..{len(self.responders)}")
        self.rtt_ms = math.nan
        self.tau_us = 0.0

    def calibrate(self) -> None:
        """Base RTT across the fabric and the reordering timeout."""
        out = self.bed.host(self.aggregators[-1]).cmd(
            f"ping -c 10 -i 0.05 -q {self.bed.ip(self.responders[0])}")
        match = re.search(PING_RTT, out)
        if not match:
            raise ReproduceError(f"no path across the leaf-spine: {out.strip()[-200:]}")
        self.rtt_ms = float(match.group(1))
        # tau: the paper's 360 us is 1.5x the time to drain one full 300 KB port at 10G; ours
        # is 1.5x the time to drain one full port of `buffer` packets at our host rate
        packet_ms = 1514 * 8 / (self.bed.p4_rate_mbps() * 1e3)
        self.tau_us = 1.5 * self.bed.buffer.capacity * packet_ms * 1000
        self.ctx.note(base_rtt_ms=self.rtt_ms, tau_us=self.tau_us,
                      rate_mbps=self.bed.rate_mbps, buffer=vars(self.bed.buffer),
                      fanin=self.fanin, reply_bytes=self.reply_bytes, qps=self.qps,
                      background_load=self.background, scale=self.scale())
        self.ctx.log(f"scale: {self.scale()}")

    def scale(self) -> str:
        rate = self.bed.p4_rate_mbps()
        return (f"{self.ctx.target}, hosts {rate:g} Mb/s, fabric {4 * rate:g} Mb/s (paper 10 "
                f"and 40 Gb/s): 1/{10_000 / rate:.0f}; {self.fanin}-way incast of "
                f"{self.reply_bytes / 1000:g} KB (paper 100 x 40 KB), "
                f"{self.bed.buffer.capacity}-packet ports (paper 300 KB); base RTT "
                f"{self.rtt_ms:.2f} ms, tau {self.tau_us / 1000:.1f} ms (paper 360 us)")

    def run(self, scheme: str, seconds: float) -> dict[str, Any]:
        """One scheme for at most `seconds`: queries, background, counters."""
        bed, ctx = self.bed, self.ctx
        bed.use(scheme, self.tau_us, self.ctx.options.agent)
        runners = {h: host_runner(bed.host(h)) for h in bed.spec.hosts}
        tcp_before = {h: nstat(r) for h, r in runners.items()}
        counters_before = bed.counters()
        drops_before = bed.switch_drops()
        cpu_before = bed.cpu()
        duration = max(5.0, seconds - 10.0)
        queries = max(1, round(self.qps * duration))
        out = ctx.store.path / scheme
        out.mkdir(exist_ok=True)
        pids = {h: bed.host(h).pid for h in bed.spec.hosts}
        with QueueSampler(ctx.store, "nfqueue", pids, {"scheme": scheme}) as sampler:
            procs = self._background(scheme, out) + self._queries(scheme, out, queries)
            _wait(procs[-len(self.aggregators):], time.monotonic() + duration)
            for proc in procs:
                stop_process(proc, 10.0, first=signal.SIGINT)  # as Ctrl-C: it writes all
            time.sleep(1.0)
        counters = {k: v - counters_before[k] for k, v in bed.counters().items()}
        counters["qlen_left"] = bed.estimates()
        tcp = {h: nstat_delta(tcp_before[h], nstat(r)) for h, r in runners.items()}
        cpu = _cores(cpu_before, bed.cpu())
        queues = {h: read_queues(pid) for h, pid in pids.items()}
        agents = bed.stop_agents()
        drops = {k: v - drops_before.get(k, 0) for k, v in bed.switch_drops().items()}
        return self._collect(scheme, out, {**counters, **cpu,
                                           **_agent_queues(agents, queues,
                                                           sampler.peak)}, drops, tcp, agents)

    def _popen(self, host: str, argv: list[str], tag: str) -> subprocess.Popen:
        proc = self.bed.host(host).popen([sys.executable, "-m", "lgkit.workloads.fct", *argv],
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         text=True)
        naming.write_pid("fct", f"{host}-{tag}", proc.pid)
        return proc

    def _queries(self, scheme: str, out: Path, queries: int) -> list[subprocess.Popen]:
        servers = ",".join(f"{self.bed.ip(h)}:{QUERY_PORT}" for h in self.responders)
        return [self._popen(host, [
            "incast", "--servers", servers, "--fanin", str(self.fanin), "--queries",
            str(queries), "--reply-size", str(self.reply_bytes), "--rate", str(self.qps),
            "--seed", str(self.ctx.seed_for(scheme, host) % 2**31), "--timeout", "20",
            "--out", str(out / f"queries-{host}.csv"),
            "--flows-out", str(out / f"replies-{host}.csv")], "incast")
            for host in self.aggregators]

    def _background(self, scheme: str, out: Path) -> list[subprocess.Popen]:
        if self.background <= 0:
            return []
        hosts = self.bed.spec.hosts
        rng = random.Random(self.ctx.seed_for("pairs"))
        procs = []
        for host in hosts:
            peer = rng.choice([h for h in hosts if h != host])
            procs.append(self._popen(host, [
                "client", "--server", self.bed.ip(peer), "--port", str(FLOW_PORT),
                "--flows", "100000", "--cdf", "websearch", "--load", str(self.background),
                "--link-mbps", str(self.bed.rate_mbps), "--timeout", "30",
                "--seed", str(self.ctx.seed_for(scheme, "bg", host) % 2**31),
                "--out", str(out / f"background-{host}.csv")], "background"))
        return procs

    def _collect(self, scheme: str, out: Path, counters: dict[str, float], drops: dict[str, int],
                 tcp: dict[str, dict[str, int]], agents: dict[str, Any]) -> dict[str, Any]:
        store = self.ctx.store
        qct: list[float] = []
        fct_reply: list[float] = []
        fct_bg: list[float] = []
        failed = 0
        for table, kind, values in (("queries", "query", qct), ("replies", "reply", fct_reply),
                                    ("background", "background", fct_bg)):
            for path in sorted(out.glob(f"{table}-*.csv")):
                host = path.stem.split("-", 1)[1]
                for row in read_table(out, path.stem):
                    store.append("queries" if kind == "query" else "flows",
                                 {"scheme": scheme, "host": host, "kind": kind, **row})
                    if not row["error"]:
                        values.append(float(row["qct_us" if kind == "query" else "fct_us"]))
                    elif kind == "query":
                        failed += 1
        totals = {key: sum(t[key] for t in tcp.values()) for key in next(iter(tcp.values()))}
        orderer = [a["orderer"] for a in agents.values() if a.get("orderer")]
        net = {"scheme": scheme, **counters, "tm_drops": drops["queue_full"],
               "rx_overflow": drops["rx_socket_overflow"], **totals,
               "early": sum(o["early"] for o in orderer),
               "late": sum(o["late"] for o in orderer),
               "reorder_timeouts": sum(o["timeouts"] for o in orderer),
               "queries_ok": len(qct), "queries_failed": failed}
        store.append("network", net)
        return {"qct": np.array(qct), "fct_reply": np.array(fct_reply),
                "fct_background": np.array(fct_bg), "net": net}


def _agent_queues(agents: dict[str, Any], queues: dict[str, list[dict[str, int]]],
                  peak: dict[str, int]) -> dict[str, int]:
    """The agents' queues over a scheme's run: packets the kernel sent them, packets they
    received (the difference passed without them: a full socket fails open), the kernel's
    drops (none while the queues fail open), the socket overflows the agents saw, the most
    packets one host's queues held at a sample (a full queue, 4096, would fail open too)."""
    received = sum(sum(a.get("received", {}).values()) for a in agents.values())
    queued = sum(q["id_sequence"] for qs in queues.values() for q in qs)
    return {"agent_queued": queued, "agent_received": received,
            "agent_bypassed": max(0, queued - received),
            "nfq_dropped": sum(q["queue_dropped"] + q["user_dropped"]
                               for qs in queues.values() for q in qs),
            "agent_overflows": sum(a.get("overflows", 0) for a in agents.values()),
            "nfq_peak": max(peak.values(), default=0)}


def _cores(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """CPU used between two readings of VertigoBed.cpu(), in cores (CPU seconds per second):
    the switches', the agents', the whole machine's, and the machine's cores."""
    elapsed = (after["total"] - before["total"]) / (os.cpu_count() or 1)
    return {f"cpu_{key}": round((after[key] - before[key]) / elapsed, 3) if elapsed else math.nan
            for key in ("switches", "agents", "busy")} | {"cores": os.cpu_count() or 1}


def _wait(procs: list[subprocess.Popen], deadline: float) -> None:
    while time.monotonic() < deadline and any(p.poll() is None for p in procs):
        time.sleep(0.5)




def _ms(values: np.ndarray, stat: Callable[[np.ndarray], float]) -> float:
    return stat(values) / 1000 if len(values) else math.nan


def _p99(values: np.ndarray) -> float:
    return float(tail(values, (0.99,))[0].value) if len(values) else math.nan


def _all_queries_ms(result: dict[str, Any]) -> np.ndarray:
    """Every query's QCT in ms, the failed ones (timed out) as infinitely long: the completed
    queries alone would flatter a scheme that completes few."""
    return np.concatenate([result["qct"], np.full(result["net"]["queries_failed"], np.inf)]) / 1000


def _p99_all(result: dict[str, Any]) -> float:
    """p99 QCT in ms over every query (`_all_queries_ms`)."""
    values = _all_queries_ms(result)
    return float(np.percentile(values, 99, method="higher")) if len(values) else math.nan


def _p99_text(scheme: str, result: dict[str, Any]) -> tuple[str, tuple[float, float, float]]:
    """'scheme P ms (95% bounds L to H)' and (P, L, H) (order statistics, exact binomial; a
    bound beyond the sample when too few queries ran to place it)."""
    with np.errstate(invalid="ignore"):  # interpolating between two infinite values
        est = quantile_ci(_all_queries_ms(result), 0.99)
    p99 = _p99_all(result)
    low, high = ("beyond the sample" if math.isnan(x) else f"{x:.0f}" for x in (est.low, est.high))
    return f"{scheme} {p99:.0f} ms (95% bounds {low} to {high})", (p99, est.low, est.high)


def _tail_check(results: dict[str, dict[str, Any]], scheme: str) -> Check:
    """Vertigo's p99 QCT below `scheme`'s; the bounds say whether the gap is beyond chance."""
    mine, (v, _, mine_high) = _p99_text("vertigo", results["vertigo"])
    other, (o, other_low, _) = _p99_text(scheme, results[scheme])
    apart = "apart" if mine_high < other_low else "not apart"
    return Check(f"tail (p99) QCT under incast, a query that failed counted as longer than any: "
                 f"{mine} vs {other} (lower; bounds {apart})", v < o)


def _checks(results: dict[str, dict[str, Any]]) -> list[Check]:
    """The paper's direction: Vertigo's tail QCT below ECMP's and DRILL's, and at least as many
    queries completed as under ECMP."""
    mine = results["vertigo"]
    checks = [_tail_check(results, scheme) for scheme in ("ecmp", "drill") if scheme in results]
    if "ecmp" in results:
        done, ecmp = mine["net"]["queries_ok"], results["ecmp"]["net"]["queries_ok"]
        checks.append(Check(f"queries completed: vertigo {done} vs ecmp {ecmp} (at least as "
                            f"many)", done >= ecmp))
    return checks


def _tables(ctx: Context, workload: Workload, results: dict[str, dict[str, Any]]
            ) -> list[Comparison]:
    scale = workload.scale()
    rows = []
    for scheme, r in results.items():
        flows = np.concatenate([r["fct_reply"], r["fct_background"]])
        rows.append(Row(f"{scheme} (n={len(r['qct'])})", [
            _ms(r["qct"], np.mean), _ms(r["qct"], np.median), _ms(r["qct"], _p99),
            _ms(flows, np.median), _ms(flows, _p99)]))
    times = Comparison("Vertigo: incast query and flow completion times (ms)",
                       ["QCT mean", "QCT p50", "QCT p99", "FCT p50", "FCT p99"], rows, scale,
                       units="ms at our scale (the paper gives these as figures only)")
    gains: list[Row] = []
    checks: list[Check] = []
    if "vertigo" in results:
        mine = results["vertigo"]
        for scheme, r in results.items():
            if scheme == "vertigo":
                continue
            flows = np.concatenate([r["fct_reply"], r["fct_background"]])
            vflows = np.concatenate([mine["fct_reply"], mine["fct_background"]])
            gains.append(Row(f"{scheme} / vertigo", [
                ratio(_ms(r["qct"], np.mean), _ms(mine["qct"], np.mean)),
                ratio(_ms(r["qct"], _p99), _ms(mine["qct"], _p99)),
                ratio(_ms(flows, _p99), _ms(vflows, _p99))],
                [PAPER_QCT_GAIN.get(scheme), None,
                 PAPER_FCT_P99_GAIN_ECMP if scheme == "ecmp" else None]))
        checks = _checks(results)
    gain = Comparison("Vertigo: how many times lower than each scheme",
                      ["mean QCT", "p99 QCT", "p99 FCT"], gains, scale,
                      units="times lower with Vertigo (scale-free)",
                      notes=["paper: TCP at 85% load (abstract); its p99 FCT gain is against "
                             "DCTCP+ECMP (§6); DCTCP is not in this kernel: ours run CUBIC"],
                      checks=checks)
    net_rows = [Row(s, [r["net"][k] for k in (
        "vertigo_full_drops", "vertigo_ttl_drops", "tm_drops", "rx_overflow", "vertigo_deflected",
        "vertigo_pushout", "qlen_left", "TcpExtTCPTimeouts", "TcpRetransSegs",
        "TcpExtTCPSynRetrans", "early", "late", "agent_bypassed", "nfq_peak", "cpu_switches",
        "cpu_agents", "cpu_busy")])
        for s, r in results.items()]
    network = Comparison("Vertigo: drops, deflections, RTOs and reordering (packets)",
                         ["drops", "TTL", "TM", "rx overflow", "deflected", "push-out",
                          "qlen left", "RTOs", "retrans", "SYN retrans", "early", "late",
                          "agent bypass", "nfq peak", "switch CPU", "agent CPU", "busy CPU"],
                         net_rows, scale,
                         units="counts during each scheme's run; rx overflow: lost in a software "
                               "switch's receive buffer (the switch fell behind, CPU); "
                               "qlen left: the program's queue-length estimates summed over "
                               "every port 1 s after the traffic stopped, never reset between "
                               "schemes (packets still draining count; a value that stays and "
                               "grows means lost updates, ports that look full); "
                               "early/late: Vertigo's receivers (reordered packets they held / "
                               "let pass); agent bypass: packets the kernel queued to the agents "
                               "that passed without them (the queues fail open when an agent "
                               "falls behind); nfq peak: most packets one host's queues held at a "
                               "1 s sample; CPU in cores: the switches', the host agents', the "
                               f"whole machine's (of {os.cpu_count()}, shared with all it runs)")
    return [times, gain, network]
