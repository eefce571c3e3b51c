"""STF sequences on the built-in target and on BMv2 simple_switch, untimed, compared packet by
packet and register by register (`lgkit diff-bmv2` runs the kit's programs through it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from finsy.proto import p4i

from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.frontend.compiler import CompiledProgram, compile_file
from lgkit.sw.lang.p4info import build_p4info
from lgkit.sw.tools.bmv2_stf import (
    Bmv2Error,
    Bmv2StfRun,
    Probe,
    compare,
    compile_bmv2,
    run_builtin,
)
from lgkit.sw.tools.stf import PacketStmt, parse_stf

REPO = Path(__file__).resolve().parents[3]
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
