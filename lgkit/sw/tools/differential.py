"""`lgkit diff-bmv2`: every STF test of the kit's P4 programs (LinkGuardian, Vertigo, PABO, the
course's solutions) and random LinkGuardian sequences on the built-in target and on BMv2
simple_switch, untimed, compared packet by packet and register by register."""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from finsy.proto import p4i

from lgkit.sim.lg_stf import lg_probes, random_lg_stf
from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.frontend.compiler import CompiledProgram, compile_file
from lgkit.sw.lang.p4info import build_p4info
from lgkit.sw.tools.bmv2_stf import (
    Bmv2Error,
    Bmv2StfRun,
    Probe,
    compare,
    compile_bmv2,
    missing_tools,
    run_builtin,
)
from lgkit.sw.tools.stf import PacketStmt, parse_stf

REPO = Path(__file__).resolve().parents[2]
LG_PROGRAM = REPO / "p4" / "linkguardian.p4"
LG_STF_DIR = REPO / "tests" / "lg_stf"


def stf_suites() -> list[tuple[Path, Path]]:
    """(program, folder of its STF tests) for every program of the kit that has STF tests."""
    suites = [(LG_PROGRAM, LG_STF_DIR)]
    suites += [(REPO / "p4" / f"{name}.p4", REPO / "tests" / f"{name}_stf")
               for name in ("vertigo", "pabo")]
    suites += [(solution, solution.parent.parent / "tests")
               for solution in sorted(REPO.glob("exercises/*/solution/*.p4"))
               if (solution.parent.parent / "tests").is_dir()]
    return suites


@dataclass
class Outcome:
    """One sequence on both targets."""

    name: str
    packets_in: int
    packets_out: int = 0
    values: int = 0
    differences: list[str] = field(default_factory=list)

    def line(self) -> str:
        verdict = "DIFFERENT" if self.differences else "SAME"
        return (f"{verdict:9s} {self.name}: {self.packets_in} packets in, {self.packets_out} "
                f"out, {self.values} values compared")


@dataclass
class Target:
    """One program compiled for both targets."""

    compiled: CompiledProgram
    info: p4i.P4Info
    json_path: Path
    bmv2_info: p4i.P4Info


class Differential:
    """The kit's programs compiled for both targets (each on first use), ready to run
    sequences."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.targets: dict[Path, Target] = {}

    def target(self, program: Path) -> Target:
        if program not in self.targets:
            compiled = compile_file(str(program))
            build = self.work / "build" / str(len(self.targets))
            self.targets[program] = Target(compiled, build_p4info(compiled.ir),
                                           *compile_bmv2(program, build))
        return self.targets[program]

    def run(self, name: str, text: str, probes: list[Probe],
            program: Path = LG_PROGRAM) -> Outcome:
        """Both targets on one STF text (BMv2 problems count as differences)."""
        target = self.target(program)
        stmts = parse_stf(text, name)
        outcome = Outcome(name, sum(isinstance(s, PacketStmt) for s in stmts))
        ours = run_builtin(Pipeline.load(target.compiled), target.info, stmts, probes)
        try:
            work = self.work / name.replace("/", "_")
            bmv2 = Bmv2StfRun(target.json_path, target.bmv2_info, work).run(stmts, probes)
        except Bmv2Error as exc:
            outcome.differences.append(f"BMv2: {exc}")
            return outcome
        outcome.packets_out = sum(len(v) for v in ours.received.values())
        outcome.values = len(ours.state)
        outcome.differences = compare(ours, bmv2)
        return outcome

    def stf_file(self, path: Path, program: Path = LG_PROGRAM) -> Outcome:
        """An STF test of a program (its own reads are compared)."""
        name = str(path.relative_to(REPO).with_suffix("")) if path.is_relative_to(REPO) \
            else path.stem
        return self.run(name, path.read_text(), [], program)

    def random(self, seed: int, packets: int) -> Outcome:
        """A random LG sequence, with the whole per-port state compared at the end."""
        return self.run(f"random-{seed}", random_lg_stf(seed, packets),
                        lg_probes(self.target(LG_PROGRAM).info))


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
    cmd.add_argument("--random", type=int, default=10, help="random sequences (10)")
    cmd.add_argument("--packets", type=int, default=100, help="packets per sequence (100)")
    cmd.add_argument("--seed", type=int, default=1, help="first seed (1)")
    cmd.add_argument("--work", help="keep BMv2's files (pcaps, logs) here")
    cmd.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    missing = missing_tools()
    if missing:
        print(f"lgkit: error: bmv2: {', '.join(missing)} not installed (not on PATH)",
              file=sys.stderr)
        return 1
    if args.random < 0 or args.packets < 1:
        print("lgkit: error: --random must be >= 0 and --packets >= 1", file=sys.stderr)
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
        jobs = [lambda p=path, prog=program: diff.stf_file(p, prog)
                for program, folder in stf_suites() for path in sorted(folder.glob("*.stf"))]
        jobs += [lambda s=seed: diff.random(s, args.packets)
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
