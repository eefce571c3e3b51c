"""`lgkit diff-bmv2`: every STF test of the kit's P4 programs (LinkGuardian, Vertigo, PABO, the
course's solutions) and random LinkGuardian sequences on the built-in target and on BMv2."""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path

from lgkit.control.lg_stf import lg_probes, random_lg_stf
from lgkit.core.argtypes import SEED, ranged
from lgkit.sw.tools.bmv2_stf import Bmv2Error, missing_tools
from lgkit.sw.tools.differential import LG_PROGRAM, Differential, Outcome, stf_suites


def random_sequence(diff: Differential, seed: int, packets: int) -> Outcome:
    """A random LG sequence, with the whole per-port state compared at the end."""
    return diff.run(f"random-{seed}", random_lg_stf(seed, packets),
                    lg_probes(diff.target(LG_PROGRAM).info))


def register(subparsers: argparse._SubParsersAction) -> None:
    cmd = subparsers.add_parser(
        "diff-bmv2", help="the STF tests and random LG sequences on the built-in target vs BMv2",
        description="Run every STF test of the kit's programs (tests/lg_stf, "
                    "tests/vertigo_stf, tests/pabo_stf, exercises/*/tests with the solutions) "
                    "and random LinkGuardian packet sequences (losses, retransmissions, "
                    "duplicates, dummies, ACKs, host traffic) on the built-in target and on "
                    "BMv2 simple_switch, one packet at a time, and compare the packets sent "
                    "and every register and counter. Needs p4c-bm2-ss, simple_switch and "
                    "simple_switch_CLI on PATH.")
    cmd.add_argument("--random", type=ranged(int, 0, 100_000), default=10,
                     help="random sequences (10)")
    cmd.add_argument("--packets", type=ranged(int, 1, 1_000_000), default=100,
                     help="packets per sequence (100)")
    cmd.add_argument("--seed", type=SEED, default=1, help="first seed (1)")
    cmd.add_argument("--work", help="keep BMv2's files (pcaps, logs) here")
    cmd.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    missing = missing_tools()
    if missing:
        print(f"lgkit: error: bmv2: {', '.join(missing)} not installed (not on PATH)",
              file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="lgkit-diff-") as tmp:
        work = Path(args.work) if args.work else Path(tmp)
        try:
            diff = Differential(work)
            diff.target(LG_PROGRAM)
        except Bmv2Error as exc:
            print(f"lgkit: error: bmv2: {exc}", file=sys.stderr)
            return 1
        outcomes = []
        jobs: list[Callable[[], Outcome]] = [
            partial(diff.stf_file, path, program)
            for program, folder in stf_suites() for path in sorted(folder.glob("*.stf"))]
        jobs += [partial(random_sequence, diff, seed, args.packets)
                 for seed in range(args.seed, args.seed + args.random)]
        for job in jobs:
            outcome = job()
            outcomes.append(outcome)
            print(outcome.line(), flush=True)
            for line in outcome.differences[:20]:
                print("    " + line)
    different = [o for o in outcomes if o.differences]
    print(f"{len(outcomes)} sequences, {sum(o.packets_in for o in outcomes)} packets in, "
          f"{sum(o.packets_out for o in outcomes)} out, "
          f"{sum(o.values for o in outcomes)} values compared: "
          f"{len(different)} with differences")
    return 1 if different else 0
