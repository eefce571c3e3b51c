"""The `lgkit soak` subcommand: LinkGuardian over a lossy link in virtual time."""

from __future__ import annotations

import argparse
import sys

from lgkit.sim.soak import SoakSpec, report, run_soak


def register(subparsers: argparse._SubParsersAction) -> None:
    soak = subparsers.add_parser(
        "soak", help="randomized LinkGuardian soak over a lossy link, in virtual time")
    soak.add_argument("--packets", type=int, default=200_000, help="packets to send (200000)")
    soak.add_argument("--quick", action="store_true", help="15000 packets instead")
    soak.add_argument("--loss", type=float, default=1e-2, help="i.i.d. link loss rate (1e-2)")
    soak.add_argument("--target", type=float, default=1e-6,
                      help="target effective loss; N copies from Eq. 2 (1e-6)")
    soak.add_argument("--seed", type=int, default=1, help="random seed (1)")
    soak.add_argument("--mode", choices=("lg", "lg_nb", "off"), default="lg")
    soak.add_argument("--rate-gbps", type=float, default=25.0, help="link rate (25)")
    soak.add_argument("--load", type=float, default=0.8, help="offered load, share of rate")
    soak.add_argument("--size", type=int, default=1000, help="frame size in bytes (1000)")
    soak.add_argument("--ack-timeout-us", type=int, default=None,
                      help="ackNoTimeout in us (default: the paper's value, 8 at 25G, 7 at 100G)")
    soak.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    packets = 15_000 if args.quick else args.packets
    try:
        spec = SoakSpec(packets=packets, loss=args.loss, target=args.target, seed=args.seed,
                        mode=args.mode, rate_bps=args.rate_gbps * 1e9, load=args.load,
                        size=args.size, ack_timeout_us=args.ack_timeout_us)
    except ValueError as exc:
        print(f"lgkit soak: {exc}", file=sys.stderr)
        return 2
    result = run_soak(spec)
    print(report(result))
    return 1 if result.problems() else 0
