"""`lgkit clean`, `lgkit demo` and `lgkit run`: the experiment harness on the command line."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from lgkit.core.argtypes import SEED, ranged
from lgkit.core.targets import DEFAULT_TARGET, TARGETS, preflight
from lgkit.net.inject.registry import AUTO as INJECTOR_AUTO
from lgkit.net.inject.registry import CHOICES as INJECTOR_CHOICES
from lgkit.net.spec.scenario import PHASES


def register(subparsers: Any) -> None:
    """Add the harness subcommands."""
    clean = subparsers.add_parser(
        "clean", help="remove every namespace, interface, process and rule the kit created",
        description="Like `mn -c`, limited to what the kit created (names starting with 'lg', "
                    "nftables tables 'lgkit_*', processes recorded in /run/lgkit).")
    clean.add_argument("--wait", action="store_true",
                       help="wait for the run in progress to end instead of refusing")
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

    chaos = subparsers.add_parser(
        "interrupt-test", help="kill runs at random moments with random signals; check cleanup",
        description="Start `lgkit run` once uninterrupted (it must end complete and clean; "
                    "its length bounds the random moments), then RUNS times, interrupting each "
                    "at a random moment of its life with a random action (Ctrl-C once, three "
                    "times or in a burst, SIGTERM, SIGKILL of the runner and/or its watchdog); "
                    "then check that nothing of the kit is left after at most one `lgkit "
                    "clean` and that every run ended complete or incomplete. Prints one row per "
                    "run (an action in parentheses came after its run had ended). Needs root; "
                    "takes ~20-30 s per run.")
    chaos.add_argument("--runs", type=ranged(int, 1, 1000), default=20,
                       help="how many runs to kill (20)")
    chaos.add_argument("--seed", type=SEED, default=1, help="random seed (1)")
    chaos.add_argument("--target", choices=tuple(TARGETS), default=DEFAULT_TARGET,
                       help="switch implementation of the runs (builtin)")
    chaos.add_argument("--seconds", type=ranged(float, 0.5, 600.0), default=4.0,
                       help="flow length of each run's phases (4)")
    chaos.add_argument("--workdir", default=None,
                       help="where scenarios, logs and results go (a temporary folder)")
    chaos.set_defaults(func=_interrupt_test)


def _add_run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--target", choices=tuple(TARGETS), default=DEFAULT_TARGET,
                        help="switch implementation (default builtin; lxbr: Linux bridges, "
                             "no P4)")
    parser.add_argument("--injector", choices=INJECTOR_CHOICES, default="auto",
                        help=f"corruption injector (auto: {', else '.join(INJECTOR_AUTO)})")
    parser.add_argument("--notifier", choices=("redis", "local"), default="redis",
                        help="corruptd's channel to the switch control")
    parser.add_argument("--rate-mbps", type=float, help="link rate (default: per target)")
    parser.add_argument("--seconds", type=float, help="override the flow length")
    parser.add_argument("--results", help="folder that receives the run's results folder "
                                          "(default measurements/runs)")
    parser.add_argument("--program", help="LinkGuardian program of the protected link's "
                                          "switches: v1model (default, p4/linkguardian.p4), "
                                          "tofino (p4/tofino/linkguardian.p4, TNA, builtin "
                                          "target only), per role as sender=tofino,"
                                          "receiver=v1model; or a P4 file for every switch "
                                          "(the lg_off phase only)")


def _clean(args: argparse.Namespace) -> int:
    if os.geteuid() != 0:
        print("lgkit: error: lgkit clean needs root", file=sys.stderr)
        return 1
    from lgkit.core.lock import LockBusy, machine_lock
    from lgkit.net.lifecycle.cleanup import clean

    try:
        with machine_lock(wait=args.wait):
            print(clean().summary())
    except LockBusy as exc:
        print(f"lgkit: error: {exc}; a run is in progress (end it first, e.g. Ctrl-C or "
              "kill PID; its watchdog cleans up), or lgkit clean --wait", file=sys.stderr)
        return 1
    return 0


def _interrupt_test(args: argparse.Namespace) -> int:
    if os.geteuid() != 0:
        print("lgkit: error: lgkit interrupt-test needs root", file=sys.stderr)
        return 1
    import tempfile
    from pathlib import Path

    from lgkit.net.lifecycle.interrupt import calibrate, format_outcomes, interrupt_runs

    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="lgkit-interrupt-"))
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"interrupt-test: {args.runs} runs on {args.target}, logs and results in {workdir}",
          flush=True)

    def progress(index: int, outcome) -> None:
        print(f"  run {index + 1}/{args.runs}: {outcome.action} at {outcome.at_s:.1f} s -> "
              f"{outcome.status}{', needed lgkit clean' if outcome.needed_clean else ''}"
              f"{'' if outcome.ok else ', LEFT SOMETHING'}", flush=True)

    first, length = calibrate(workdir, args.target, args.seconds)
    print(f"  uninterrupted run: {first.status} in {length:.1f} s"
          f"{'' if first.ok else ', LEFT SOMETHING'}", flush=True)
    if first.status != "complete" or not first.ok:
        print("lgkit: error: the uninterrupted run did not end complete and clean; see "
              f"{workdir / 'run-1.log'}", file=sys.stderr)
        return 1
    outcomes = interrupt_runs(args.runs, args.seed, args.target, args.seconds, workdir,
                              0.9 * length, progress)
    print(format_outcomes(outcomes))
    return 0 if all(o.ok for o in outcomes) else 1


def _demo(args: argparse.Namespace) -> int:
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    from lgkit.net.experiment_main import ExperimentError, plan_experiment, run_experiment

    try:
        plan = plan_experiment(args)
        problem = preflight(args.target)
        if problem:
            raise ExperimentError(problem)
        run_experiment(plan)
    except ExperimentError as exc:
        print(f"lgkit: error: {exc}", file=sys.stderr)
        return 1
    return 0
