"""`lgkit soak`, `lgkit stress` and `lgkit bench-stress`: LinkGuardian in virtual time."""

from __future__ import annotations

import argparse
import sys

from lgkit.core.argtypes import LOSS_RATE, SEED, ranged
from lgkit.sim.soak import SoakSpec, report, run_soak

TOFINO_PKTGEN_PERIOD_NS = 124
MAX_FRAMES = 100_000_000
TARGET = ranged(float, 0.0, 1.0, above=True, below=True)
RATE_GBPS = ranged(float, 0.0, 1000.0, above=True)
TIMING_OPTIONS = {
    "ingress_latency_ns": "arrival to TM queue",
    "egress_latency_ns": "dequeue to wire",
    "recirc_latency_ns": "recirculation port back to ingress",
    "clone_latency_ns": "a clone's way into its queue",
    "link_delay_ns": "propagation delay of the protected link",
}


def register(subparsers: argparse._SubParsersAction) -> None:
    soak = subparsers.add_parser(
        "soak", help="randomized LinkGuardian soak over a lossy link, in virtual time")
    soak.add_argument("--packets", type=ranged(int, 1, MAX_FRAMES), default=200_000,
                      help="packets to send (200000)")
    soak.add_argument("--quick", action="store_true", help="15000 packets instead")
    soak.add_argument("--loss", type=LOSS_RATE, default=1e-2, help="i.i.d. link loss rate (1e-2)")
    soak.add_argument("--target", type=TARGET, default=1e-6,
                      help="target effective loss; N copies from Eq. 2 (1e-6)")
    soak.add_argument("--seed", type=SEED, default=1, help="random seed (1)")
    soak.add_argument("--mode", choices=("lg", "lg_nb", "off"), default="lg")
    soak.add_argument("--rate-gbps", type=RATE_GBPS, default=25.0, help="link rate (25)")
    soak.add_argument("--load", type=ranged(float, 0.0, 1.0, above=True), default=0.8,
                      help="offered load, share of rate")
    soak.add_argument("--size", type=ranged(int, 64, 1500), default=1000,
                      help="frame size in bytes (1000)")
    soak.add_argument("--ack-timeout-us", type=ranged(int, 1, 1_000_000), default=None,
                      help="ackNoTimeout in us (default: the paper's value, 8 at 25G, 7 at 100G)")
    soak.set_defaults(func=run)
    _register_stress(subparsers)
    _register_bench(subparsers)


def _stress_options(parser: argparse.ArgumentParser, frames: int) -> None:
    parser.add_argument("--rate-gbps", type=RATE_GBPS, default=100.0, help="link rate (100)")
    parser.add_argument("--loss", type=LOSS_RATE, default=1e-3, help="link loss rate (1e-3)")
    parser.add_argument("--mode", choices=("lg", "lg_nb", "off"), default="lg")
    parser.add_argument("--frames", type=ranged(int, 1, MAX_FRAMES), default=frames,
                        help=f"MTU frames after the warm-up ({frames})")
    parser.add_argument("--seed", type=SEED, default=1, help="random seed (1)")


def _register_stress(subparsers: argparse._SubParsersAction) -> None:
    stress = subparsers.add_parser(
        "stress", help="line-rate stress test of one protected link, in virtual time")
    _stress_options(stress, 100_000)
    stress.add_argument("--burst", type=ranged(float, 1.0, 1e6), default=1.0,
                        help="mean loss burst in frames: 1 = i.i.d., > 1 = Gilbert-Elliott")
    stress.add_argument("--target", type=TARGET, default=1e-8,
                        help="target effective loss; N copies from Eq. 2 (1e-8)")
    stress.add_argument("--copies", type=ranged(int, 0, 64), default=None,
                        help="N copies instead of Eq. 2")
    stress.add_argument("--frame-bytes", type=ranged(int, 64, 9000), default=1514,
                        help="frame size (1514)")
    stress.add_argument("--mix", default=None, metavar="SIZE:WEIGHT,...",
                        help="a seeded frame-size mix instead, e.g. 64:1,1514:3")
    stress.add_argument("--pktgen", action="store_true",
                        help=f"a frame every {TOFINO_PKTGEN_PERIOD_NS} ns (Tofino pktgen) "
                             "instead of back to back")
    stress.add_argument("--max-gap", type=ranged(int, 100, MAX_FRAMES), default=None,
                        help="cut loss-free runs longer than this many frames (see docs)")
    stress.add_argument("--warmup", type=ranged(int, 0, MAX_FRAMES), default=2_000,
                        help="loss-free warm-up frames")
    stress.add_argument("--native", action="store_true",
                        help="run on the native event loop (switches on the native engine): "
                             "the same result, ~25x faster")
    for name, what in TIMING_OPTIONS.items():
        stress.add_argument(f"--{name.replace('_', '-')}", type=ranged(int, 0, 10**9), default=None,
                            help=f"{what} (ns; the calibrated default otherwise)")
    stress.set_defaults(func=run_stress_command)


def run_stress_command(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from lgkit.sim.stress import StressSpec, report, run_stress
    from lgkit.sim.timing import TimingModel

    try:
        timing = TimingModel.for_link(args.rate_gbps)
        for name in TIMING_OPTIONS:
            if getattr(args, name) is not None:
                timing = replace(timing, **{name: getattr(args, name)})
        mix = _mix(args.mix) if args.mix else ()
        spec = StressSpec(
            rate_gbps=args.rate_gbps, loss=args.loss, burst=args.burst, mode=args.mode,
            target=args.target, copies=args.copies, frames=args.frames,
            warmup_frames=args.warmup, frame_bytes=args.frame_bytes, mix=mix,
            period_ps=TOFINO_PKTGEN_PERIOD_NS * 1000 if args.pktgen else None,
            max_gap=args.max_gap, seed=args.seed, timing=timing)
        if args.native:
            from lgkit.sim.native_stress import run_stress_native

            result = run_stress_native(spec)
        else:
            result = run_stress(spec, progress=sys.stderr.isatty())
    except ValueError as exc:  # NativeLoopError too
        print(f"lgkit: error: {exc}", file=sys.stderr)
        return 1
    print(report(result))
    return 0


def _mix(text: str) -> tuple[tuple[int, float], ...]:
    """'64:1,1514:3' -> ((64, 1.0), (1514, 3.0))."""
    try:
        pairs = [part.split(":") for part in text.split(",")]
        return tuple((int(size), float(weight)) for size, weight in pairs)
    except ValueError:
        raise ValueError(f"--mix wants SIZE:WEIGHT,... (got {text!r})") from None


def _register_bench(subparsers: argparse._SubParsersAction) -> None:
    bench = subparsers.add_parser(
        "bench-stress", help="simulated frames per second of the virtual-time stress test")
    _stress_options(bench, 20_000)
    bench.add_argument("--repeat", type=ranged(int, 1, 100), default=3, help="runs (3)")
    bench.set_defaults(func=run_bench)


def run_bench(args: argparse.Namespace) -> int:
    from lgkit.sim.bench import bench_stress

    print(bench_stress(args.rate_gbps, args.loss, args.mode, args.frames, args.repeat,
                       args.seed))
    return 0


def run(args: argparse.Namespace) -> int:
    packets = 15_000 if args.quick else args.packets
    try:
        spec = SoakSpec(packets=packets, loss=args.loss, target=args.target, seed=args.seed,
                        mode=args.mode, rate_bps=args.rate_gbps * 1e9, load=args.load,
                        size=args.size, ack_timeout_us=args.ack_timeout_us)
    except ValueError as exc:
        print(f"lgkit: error: {exc}", file=sys.stderr)
        return 1
    result = run_soak(spec)
    print(report(result))
    return 1 if result.problems() else 0

