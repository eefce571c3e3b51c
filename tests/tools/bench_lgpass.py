"""Microseconds per pipeline pass of the LinkGuardian program on the built-in target, by kind of
pass (the sender's data ingress and egress, a Tx copy's loop passes, the receiver's), measured
in-process on the two-switch virtual-time network (no root, no I/O), min/median/max over repeats.
A pass kind's figure is the median of its passes (robust to preemption, but blind to a cost
that only some passes of a kind pay, e.g. a memo miss); the last line, the run's process CPU
time per data frame (both switches, traffic managers and the simulator, passes timed), counts
every pass.

    .venv/bin/python tests/tools/bench_lgpass.py [--repeat 5] [--frames 3000]
    .venv/bin/python tests/tools/bench_lgpass.py --against /work/main   # before vs after

`--against DIR` runs the same measurement with another checkout's `lgkit` (e.g. main before a
change), alternating runs in fresh processes, and prints both side by side with the ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
REPO = HERE.parents[2]
FRAME = 1514
RATE_BPS = 100e6
LOSS = 1e-2


def _classify(switch: str, fn: str, args: tuple, loop_port: int, recirc_port: int) -> str:
    role = "sender" if switch == "s1" else "receiver"
    if fn == "ingress":
        return f"{role} ingress from port {args[0]}"
    if fn == "ingress_job":
        return f"{role} ingress of a recirculated packet"
    port = args[0].port
    where = ("loop port" if port == loop_port else "recirc port" if port == recirc_port
             else f"port {port}")
    return f"{role} egress to {where}"


def measure(frames: int, seed: int, loop_share: float = 2.0,
            timed_passes: bool = True) -> dict[str, Any]:
    """One virtual-time run: per pass kind, the passes and their median ns (the median of
    each pass's own wall time, robust to the preemptions of a busy machine)."""
    from lgkit.control.linkguardian import LGParams
    from lgkit.sim.scenario import LINK_PORT, LGNet, ScenarioConfig

    frame_pps = RATE_BPS / (FRAME * 8)
    cfg = ScenarioConfig(params=LGParams(target_loss=1e-4, actual_loss=LOSS, ack_timeout_us=2500),
                         rate_bps=RATE_BPS, loss=LOSS, seed=seed, loop_pps=loop_share * frame_pps,
                         wire_log=False, keep_frames=False, pass_latency_ns=20_000)
    net = LGNet(cfg)
    for switch in net.switches.values():  # the testbed's courier queue (COURIER_RATE_SHARE)
        switch.tm.set_queue_rate(0.5 * frame_pps, port=LINK_PORT, prio=0)
    arrived = [0]
    net.hosts["h2"].handlers.append(lambda host, t, data: arrived.__setitem__(0, arrived[0] + 1))
    loop_port, recirc_port = net.layout.loop_port, net.layout.recirc_port
    durations: dict[str, list[int]] = defaultdict(list)
    clock = time.perf_counter_ns

    def wrap(switch: str, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any) -> Any:
            t = clock()
            out = fn(*args)
            t = clock() - t
            durations[_classify(switch, name, args, loop_port, recirc_port)].append(t)
            return out
        return timed

    for switch, pipeline in net.pipelines.items() if timed_passes else ():
        for name in ("ingress", "ingress_job", "egress"):
            setattr(pipeline, name, wrap(switch, name, getattr(pipeline, name)))
    pps = 0.9 * frame_pps
    net.send_stream(frames, pps=pps, size=FRAME)
    cpu = time.process_time()
    net.run(int(frames / pps * 1e9) + 50_000_000)
    cpu = time.process_time() - cpu
    overhead = min(-clock() + clock() for _ in range(1000))
    return {"delivered": arrived[0], "frames": frames, "cpu_s": cpu,
            "passes": {k: (len(v), statistics.median(v) - overhead)
                       for k, v in durations.items()}}


def _child(frames: int, seed: int, loop_share: float, src: Path) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(src))
    out = subprocess.run([sys.executable, str(HERE), "--child", "--frames", str(frames),
                          "--seed", str(seed), "--loop-share", str(loop_share),
                          "--src", str(src)],
                         check=True, capture_output=True, text=True, env=env, cwd=src)
    return json.loads(out.stdout)


def _mmm(values: list[float]) -> str:
    return f"{min(values):6.1f} {statistics.median(values):6.1f} {max(values):6.1f}"


def report(runs: dict[str, list[dict[str, Any]]]) -> str:
    """The table: per pass kind, us per pass min/median/max for each checkout."""
    names = list(runs)
    kinds = sorted({k for rs in runs.values() for r in rs for k in r["passes"]})
    head = f"{'pass kind':48s}" + "".join(f" {n[-24:]:>24s}" for n in names)
    lines = [head + ("   median ratio" if len(names) == 2 else ""),
             f"{'':48s}" + " (passes/frame, us min med max)" * len(names)]
    per_frame: dict[str, list[float]] = {n: [] for n in names}
    for kind in kinds:
        cells, medians = [], []
        for name in names:
            rs = [r for r in runs[name] if kind in r["passes"]]
            us = [r["passes"][kind][1] / 1e3 for r in rs]
            ppf = statistics.median(r["passes"][kind][0] / r["frames"] for r in rs)
            cells.append(f" {ppf:5.2f}  {_mmm(us)}")
            medians.append(statistics.median(us))
        ratio = f"   {medians[0] / medians[1]:5.2f}x" if len(names) == 2 else ""
        lines.append(f"{kind:48s}" + "".join(f"{c:>25s}" for c in cells) + ratio)
    for name in names:
        for r in runs[name]:
            per_frame[name].append(sum(n * us for k, (n, us) in r["passes"].items()
                                       if k.startswith("sender")) / 1e3 / r["frames"])
    medians = [statistics.median(per_frame[n]) for n in names]
    lines.append(f"{'sender us per data frame (all passes)':48s}"
                 + "".join(f"{'':>7s}{_mmm(per_frame[n]):>18s}" for n in names)
                 + (f"   {medians[0] / medians[1]:5.2f}x" if len(names) == 2 else ""))
    cpu = {n: [r["cpu_s"] * 1e6 / r["frames"] for r in runs[n]] for n in names}
    medians = [statistics.median(cpu[n]) for n in names]
    lines.append(f"{'process CPU us per data frame (whole run)':48s}"
                 + "".join(f"{'':>7s}{_mmm(cpu[n]):>18s}" for n in names)
                 + (f"   {medians[0] / medians[1]:5.2f}x" if len(names) == 2 else ""))
    for name in names:
        lost = [r["frames"] - r["delivered"] for r in runs[name]]
        lines.append(f"{name}: {len(runs[name])} runs, frames lost end to end per run: {lost}")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frames", type=int, default=3000, help="data frames per run")
    ap.add_argument("--repeat", type=int, default=5, help="runs per checkout")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--loop-share", type=float, default=2.0,
                    help="loop port rate as a multiple of the frame rate (LOOP_RATE_SHARE)")
    ap.add_argument("--against", type=Path, help="another checkout to compare with (before)")
    ap.add_argument("--src", type=Path, default=REPO, help=argparse.SUPPRESS)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        sys.path.insert(0, str(args.src))  # this checkout's lgkit, not the installed one
        print(json.dumps(measure(args.frames, args.seed, args.loop_share)))
        return 0
    checkouts = [args.against.resolve(), REPO] if args.against else [REPO]
    runs: dict[str, list[dict[str, Any]]] = {str(c): [] for c in checkouts}
    print(f"LG program, virtual time, {FRAME} B frames at 90% of {RATE_BPS / 1e6:g} Mb/s, "
          f"{LOSS:g} loss, loop port at {args.loop_share:g}x the frame rate; "
          f"{args.frames} frames per run; "
          f"median wall time per pass, {args.repeat} alternating runs per checkout",
          flush=True)
    for i in range(args.repeat):
        for c in checkouts:
            runs[str(c)].append(_child(args.frames, args.seed + i, args.loop_share, c))
    print(report(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
