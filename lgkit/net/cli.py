"""`lgkit clean`, `lgkit demo` and `lgkit run`: the experiment harness on the command line."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from lgkit.net.spec.scenario import PHASES
from lgkit.net.testbed.network import TARGETS, check_tools


def register(subparsers: Any) -> None:
    """Add the harness subcommands."""
    clean = subparsers.add_parser(
        "clean", help="remove every namespace, interface, process and rule the kit created",
        description="Like `mn -c`, limited to what the kit created (names starting with 'lg', "
                    "nftables tables 'lgkit_*', processes recorded in /run/lgkit).")
    clean.set_defaults(func=_clean)

    demo = subparsers.add_parser(
        "demo", help="Fig. 7 testbed, 1e-2 corruption, TCP CUBIC with LG off, then corruptd",
        description="The README demo: a TCP CUBIC flow over a corrupting link, first without "
                    "LinkGuardian, then with corruptd switching it on by itself.")
    _add_run_options(demo)
    demo.set_defaults(func=_demo, scenario="demo")

    run = subparsers.add_parser("run", help="run a scenario from workloads/ (or a YAML path)")
    run.add_argument("scenario", help="scenario name (workloads/NAME.yaml) or path")
    _add_run_options(run)
    run.add_argument("--phases", nargs="+", choices=PHASES, help="override the phases")
    run.add_argument("--loss", type=float, help="override the configured loss rate")
    run.set_defaults(func=_run)


def _add_run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--target", choices=TARGETS, default="builtin",
                        help="switch implementation (default builtin; lxbr: Linux bridges, "
                             "no P4)")
    parser.add_argument("--injector", choices=("auto", "netem", "nft", "p4"), default="auto",
                        help="corruption injector (auto: netem, else nft)")
    parser.add_argument("--notifier", choices=("redis", "local"), default="redis",
                        help="corruptd's channel to the switch control")
    parser.add_argument("--rate-mbps", type=float, help="link rate (default: per target)")
    parser.add_argument("--seconds", type=float, help="override the flow length")
    parser.add_argument("--results", help="folder that receives the run's results folder "
                                          "(default measurements/runs)")
    parser.add_argument("--program", help="P4 program (default: p4/linkguardian.p4; "
                                          "another program runs the lg_off phase only)")


def _preflight(target: str) -> str | None:
    if os.geteuid() != 0:
        return "this command needs root (Mininet creates namespaces and interfaces)"
    missing = check_tools("mnexec", "iperf3", "nft", "ip", "ethtool", "brctl")
    if missing:
        return f"missing tools: {', '.join(missing)} (run `make setup`)"
    if target == "bmv2":
        missing = check_tools("simple_switch_grpc", "simple_switch_CLI", "p4c")
        if missing:
            return (f"bmv2: {', '.join(missing)} not installed (BMv2 and p4c come with the "
                    "Vagrant VM; use --target builtin here)")
    return None


def _clean(args: argparse.Namespace) -> int:
    if os.geteuid() != 0:
        print("error: lgkit clean needs root", file=sys.stderr)
        return 1
    from lgkit.net.lifecycle.cleanup import clean

    print(clean().summary())
    return 0


def _demo(args: argparse.Namespace) -> int:
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    problem = _preflight(args.target)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 1
    from lgkit.net.experiment_main import ExperimentError, run_experiment

    try:
        run_experiment(args)
    except ExperimentError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0
