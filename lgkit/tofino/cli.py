"""`lgkit tofino resources` and `lgkit tofino check`: bf-p4c compiles, budgets, STF scenarios."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from lgkit.sw.lang.frontend.compiler import compile_file
from lgkit.sw.lang.frontend.diagnostics import P4Error
from lgkit.tofino import bfp4c, scenarios

REPO = Path(__file__).resolve().parents[2]
OURS = REPO / "p4" / "tofino" / "linkguardian.p4"
# The committed budget of each target (bf-p4c's --target).
BUDGETS = {"tofino": REPO / "p4" / "tofino" / "budget.json",
           "tofino2": REPO / "p4" / "tofino" / "budget-tofino2.json"}
# The authors' Tofino programs (MIT), compiled the same way when their directory is given.
AUTHORS_ENV = "LGKIT_AUTHORS_TOFINO"
AUTHORS = ("switch_impl/system_impl/sender/sender.p4",
           "switch_impl/system_impl/receiver/receiver.p4")
# The paper (SIGCOMM'23, Sec. 6): state for 256 ports takes ~9% of SRAM, ~25% of stateful ALUs.
PAPER = {"sram_pct": 9.0, "salu_pct": 25.0}
SCENARIOS = REPO / "tests" / "lg_stf"
NOT_CHECKED = (
    "behaviour beyond the STF scenarios, and the model's own limits (docs/tofino.md): the "
    "packet generator's and PFC's timing, one queue per port",
    "timing on the ASIC: line rate, recirculation and mirror-buffer bandwidth, pktgen periods",
    "the traffic manager: queue priorities, PFC pause honoured by the peer's MAC",
    "tofino-model / bf_switchd (not buildable here) and a real Tofino",
)


def _error(message: str) -> int:
    print(f"lgkit: error: {message}", file=sys.stderr)
    return 1


def _compiler() -> str | None:
    found = bfp4c.find()
    if found is None:
        print("bf-p4c not found on PATH (the open Tofino compiler): nothing compiled")
    return found


def _row(name: str, r: bfp4c.Resources) -> str:
    return (f"{name:<26} {r.stages:>6} {r.sram:>5} {r.sram_pct:>6.1f}% {r.tcam:>5} "
            f"{r.tcam_pct:>5.1f}% {r.salu:>5} {r.salu_pct:>6.1f}% {r.phv_bits:>5} "
            f"{r.phv_pct:>5.1f}%")


HEADER = (f"{'program (target)':<26} {'stages':>6} {'SRAM':>5} {'':>7} {'TCAM':>5} "
          f"{'':>6} {'SALU':>5} {'':>7} {'PHV b':>5} {'':>6}")


def _compile(program: Path, bf_p4c: str, chip: bfp4c.Chip) -> bfp4c.Resources:
    with tempfile.TemporaryDirectory(prefix="lgkit-bfp4c-") as out:
        return bfp4c.compile_tna(program, Path(out), bf_p4c, chip)


def _shares(chip: bfp4c.Chip) -> str:
    return (f"shares of a {chip.target} pipe: {chip.stages} stages, {chip.totals['SRAM']} SRAM "
            f"blocks, {chip.totals['TCAM']} TCAM blocks, {chip.totals['Meter ALU']} stateful "
            f"ALUs, {chip.phv_bits} PHV bits ({' + '.join(chip.phv_classes)})")


def cmd_resources(args: argparse.Namespace) -> int:
    authors = args.authors or os.environ.get(AUTHORS_ENV)
    if authors and not Path(authors, AUTHORS[0]).is_file():
        return _error(f"{authors}: no {AUTHORS[0]} (the authors' linkguardian-tofino tree)")
    bf_p4c = _compiler()
    if bf_p4c is None:
        return 1
    chips = [bfp4c.TOFINO] + ([bfp4c.CHIPS[args.target]] if args.target != "tofino" else [])
    programs = [(f"lgkit p4/tofino ({chip.target})", OURS, chip) for chip in chips]
    if authors:
        programs += [(f"authors {Path(p).name}", Path(authors, p), bfp4c.TOFINO)
                     for p in AUTHORS]
    print(HEADER)
    for name, program, chip in programs:
        try:
            print(_row(name, _compile(program, bf_p4c, chip)), flush=True)
        except bfp4c.CompileError as exc:
            print(f"{name:<26} did not compile: {exc}")
    if not authors:
        print(f"authors' programs: not compiled (give --authors DIR or ${AUTHORS_ENV})")
    print(f"{'paper (256 ports)':<26} {'':>6} {'':>5} {PAPER['sram_pct']:>6.1f}% {'':>5} "
          f"{'':>6} {'':>5} {PAPER['salu_pct']:>6.1f}%")
    for chip in chips:
        print(_shares(chip))
    return 0


def _resources_check(program: Path, chip: bfp4c.Chip, budget_path: Path,
                     budget: dict[str, float]) -> bool | None:
    """Compile with bf-p4c and check the resources (None: bf-p4c is absent, nothing compiled)."""
    target = f"{chip.target} ({chip.arch})"
    bf_p4c = bfp4c.find()
    if bf_p4c is None:
        print(f"skipped: compile for {target} and resources: bf-p4c not on PATH")
        return None
    try:
        used = _compile(program.resolve(), bf_p4c, chip)
    except bfp4c.CompileError as exc:
        print(f"checked: compile for {target} with bf-p4c: FAILED: {exc}")
        return False
    over = bfp4c.over_budget(used, budget)
    print(f"checked: compiles for {target} with bf-p4c: ok")
    print(HEADER)
    print(_row(f"{program.name} ({chip.target})", used))
    verdict = "ok" if not over else "OVER: " + ", ".join(over)
    print(f"checked: resources against {budget_path.name}: {verdict}", flush=True)
    return not over


def _stf_check(program: Path, stf: list[str] | None) -> bool:
    """Run the STF scenarios on the built-in target (the program's binding, if it has one)."""
    try:
        binding = scenarios.load_binding(program)
        if stf is None and binding is scenarios.REFERENCE:
            print(f"skipped: STF scenarios: none given (--stf) and no {program.stem}.stf.json")
            return True
        files = scenarios.scenario_files(stf or [str(SCENARIOS)])
        compiled = compile_file(str(program))
    except (scenarios.BindingError, ValueError) as exc:
        raise CheckError(str(exc)) from None
    except P4Error as exc:
        raise CheckError(f"{program}: does not compile on the built-in target: "
                         f"{exc.diagnostics[0]}") from None
    lines, notes, ok = scenarios.check_scenarios(compiled, binding, files)
    print(f"checked: {len(files)} STF scenarios on the built-in target "
          f"({binding.tag} binding): {'ok' if ok else 'FAILED'}")
    for line in lines:
        print(f"  {line}")
    for note in notes:
        print(f"not checked: {note}")
    return ok


class CheckError(Exception):
    """Bad input to `lgkit tofino check`: one error line."""


def cmd_check(args: argparse.Namespace) -> int:
    program = Path(args.program)
    if not program.is_file():
        return _error(f"{program}: no such file")
    chip = bfp4c.CHIPS[args.target]
    budget_path = Path(args.budget) if args.budget else BUDGETS[chip.target]
    try:
        budget = json.loads(budget_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return _error(f"{budget_path}: not a readable JSON budget ({exc})")
    compiled_ok = _resources_check(program, chip, budget_path, budget)
    try:
        stf_ok = _stf_check(program, args.stf)
    except CheckError as exc:
        return _error(str(exc))
    if chip is not bfp4c.TOFINO:
        print(f"not checked: the STF scenarios on {chip.target}: the TNA model ran the program "
              "as bf-p4c --target tofino sees it (it has no t2na)")
    for item in NOT_CHECKED:
        print(f"not checked: {item}")
    return 0 if stf_ok and compiled_ok is not False else 1


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("tofino", help="compile TNA programs with bf-p4c: resources")
    sub = parser.add_subparsers(dest="tofino_command", metavar="SUBCOMMAND", required=True)
    res = sub.add_parser("resources", help="ours beside the authors' programs and the paper")
    res.add_argument("--authors", help=f"the authors' linkguardian-tofino tree (or ${AUTHORS_ENV})")
    res.add_argument("--target", choices=sorted(bfp4c.CHIPS), default="tofino",
                     help="tofino2: ours compiled for Tofino 2 (t2na) too, beside tofino's")
    res.set_defaults(func=cmd_resources)
    check = sub.add_parser(
        "check", help="compile PROG.p4 (resources), run its STF scenarios on the TNA model",
        description="Exit status 0: everything run passed (the bf-p4c compile within budget, "
                    "when bf-p4c is on PATH; every STF scenario not skipped); 1: a failure or "
                    "bad input.")
    check.add_argument("program", metavar="PROG.p4")
    check.add_argument("--target", choices=sorted(bfp4c.CHIPS), default="tofino",
                       help="bf-p4c target (tofino: tna, tofino2: t2na; the STF scenarios run "
                            "on the TNA model either way)")
    check.add_argument("--budget", help="budget JSON (default p4/tofino/budget.json, for "
                                        "tofino2 p4/tofino/budget-tofino2.json)")
    check.add_argument("--stf", nargs="+", metavar="DIR|FILE",
                       help="STF scenarios (default tests/lg_stf, through PROG.stf.json)")
    check.set_defaults(func=cmd_check)
