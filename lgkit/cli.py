"""The `lgkit` command: one subcommand per area, each registered by its own module."""

from __future__ import annotations

import argparse
import importlib
import sys

# Each module defines `register(subparsers) -> None`, adding its subcommands with
# `set_defaults(func=...)`; `func(args) -> int` returns the exit code.
SUBCOMMAND_MODULES: list[str] = [
    "lgkit.sim.cli",
    "lgkit.net.cli",
    "lgkit.fabric.cli",
    "lgkit.target.cli",
    "lgkit.target.bench",
    "lgkit.target.switch_main",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lgkit", description="LinkGuardian testbed kit: run in-network loss recovery."
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
