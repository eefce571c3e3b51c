"""`lgkit exercise` (the LinkGuardian exercises) and `lgkit toolchain` (which BMv2/p4c is used)."""

from __future__ import annotations

import argparse
import sys

from lgkit.core.targets import DEFAULT_TARGET, P4_TARGETS
from lgkit.course.toolchain import TOOLS, describe, tutorial_path


def register(subparsers: argparse._SubParsersAction) -> None:
    ex = subparsers.add_parser("exercise", help="the LinkGuardian exercises (exercises/)",
                               description="List the LinkGuardian exercises, or check one: its "
                                           "STF tests on the built-in target, then a short "
                                           "Mininet run (root) on --target.")
    actions = ex.add_subparsers(dest="action", metavar="ACTION", required=True)
    actions.add_parser("list", help="the exercises and what each teaches")
    check = actions.add_parser("check", help="check an exercise (your program, or --solution)")
    check.add_argument("name", help="exercise name or number (e.g. seqno or 1), or all")
    check.add_argument("--target", choices=P4_TARGETS, default=DEFAULT_TARGET,
                       help="the switch of the Mininet check (default: builtin)")
    check.add_argument("--solution", action="store_true", help="check solution/ instead")
    check.add_argument("--no-mininet", action="store_true", help="STF tests only")
    ex.set_defaults(func=run_exercise)

    tc = subparsers.add_parser("toolchain", help="which p4c / BMv2 commands are found: real or "
                                                 "the kit's shims (docs/course.md)")
    tc.set_defaults(func=run_toolchain)


def run_exercise(args: argparse.Namespace) -> int:
    from lgkit.course.exercise import check, check_all
    from lgkit.course.generate import EXERCISES_DIR, FOLDERS

    if args.action == "list":
        for number, folder in FOLDERS.items():
            readme = EXERCISES_DIR / folder / "README.md"
            title = readme.read_text().splitlines()[0].lstrip("# ") if readme.exists() else ""
            print(f"{number} {folder:9} {title}")
        return 0
    if args.name == "all":
        return check_all(args.target, args.solution, not args.no_mininet)
    try:
        return check(args.name, args.target, args.solution, not args.no_mininet)
    except ValueError as exc:
        print(f"lgkit: error: {exc}", file=sys.stderr)
        return 1


def run_toolchain(args: argparse.Namespace) -> int:
    path = tutorial_path()
    print("with the tutorial environment (source .venv-tutorial/env.sh):")
    for tool in TOOLS:
        print(f"  {describe(tool, path)}")
    return 0
