"""`lgkit soak-switch`: `lgkit switch` forwarding UDP between two namespaced hosts at its rate
for minutes, printing its resident memory (RSS) as it goes and the growth after warm-up
(goal: under 5%)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from lgkit.sw.tools.bench_switch import (
    HostPair,
    _run,
    program_or_error,
    start_switch,
    stop_process,
    udp_rate,
)

GOAL_GROWTH = 0.05
FRAME_BYTES = 1400
CHUNK_S = 10.0
"Forwarding runs in chunks of this length; RSS is read between them."


def rss_mb(pid: int) -> float:
    """Resident memory of a process, MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise ValueError(f"no VmRSS for pid {pid}")


def soak(program: str, seconds: float, chunk_s: float = CHUNK_S,
         log=print) -> dict[str, Any]:
    """Forward for `seconds`; the first chunk is the warm-up. Returns the RSS samples (MB), the
    forwarding rates and the growth from the end of the warm-up to the end."""
    with HostPair() as pair:
        addr = f"127.0.0.1:{30000 + os.getpid() % 1000}"
        switch = start_switch([sys.executable, "-m", "lgkit.cli", "switch", "-i",
                               f"1@{pair.sw1}", "-i", f"2@{pair.sw2}", "--grpc-server-addr",
                               addr, program])
        try:
            _run(sys.executable, "-m", "lgkit.cli", "switch-cli", "--grpc-server-addr", addr,
                 *[x for cmd in pair.entries() for x in ("-c", cmd)])
            samples, rates = [rss_mb(switch.pid)], []
            chunks = max(2, round(seconds / chunk_s))
            for i in range(chunks):
                received, _ = udp_rate(pair, FRAME_BYTES, chunk_s)
                rates.append(received)
                samples.append(rss_mb(switch.pid))
                log(f"  {(i + 1) * chunk_s:6.0f} s: {received:8.0f} pkt/s forwarded, "
                    f"RSS {samples[-1]:6.1f} MB")
                if switch.poll() is not None:
                    raise RuntimeError("the switch died during the soak")
        finally:
            stop_process(switch)
    warm = samples[1]
    return {"rss_mb": samples, "pps": rates, "growth": (samples[-1] - warm) / warm}


def register(subparsers: Any) -> None:
    cmd = subparsers.add_parser(
        "soak-switch", help="forward at the switch's rate for minutes; print RSS growth",
        description="Two namespaced hosts on veths, `lgkit switch` running p4/basic.p4 between "
                    "them, UDP 1400 B frames at full rate for --minutes; prints the switch's "
                    "RSS every 10 s and its growth after the first 10 s (goal: under 5%). "
                    "Needs root.")
    cmd.add_argument("--minutes", type=float, default=10.0, help="how long (10)")
    cmd.add_argument("--program", default=None, help="the program (default p4/basic.p4)")
    cmd.set_defaults(func=_run_soak)


def _run_soak(args: argparse.Namespace) -> int:
    if os.geteuid() != 0:
        print("lgkit: error: lgkit soak-switch needs root (namespaces, veths)", file=sys.stderr)
        return 1
    if not 0.5 <= args.minutes <= 24 * 60:
        print("lgkit: error: --minutes must be in 0.5..1440", file=sys.stderr)
        return 1
    program = program_or_error(args.program)
    if program is None:
        return 1
    print(f"soak: lgkit switch forwarding {FRAME_BYTES} B UDP for {args.minutes:g} min")
    try:
        result = soak(program, args.minutes * 60)
    except RuntimeError as exc:  # the switch did not start or died
        print(f"lgkit: error: {exc}", file=sys.stderr)
        return 1
    rss = result["rss_mb"]
    print(f"RSS: start {rss[0]:.1f} MB, after warm-up {rss[1]:.1f} MB, end {rss[-1]:.1f} MB, "
          f"max {max(rss):.1f} MB; growth after warm-up {result['growth'] * 100:+.1f}% "
          f"(goal < {GOAL_GROWTH * 100:.0f}%); forwarding min/median/max "
          f"{min(result['pps']):.0f}/{sorted(result['pps'])[len(result['pps']) // 2]:.0f}/"
          f"{max(result['pps']):.0f} pkt/s")
    return 0 if result["growth"] < GOAL_GROWTH else 1
