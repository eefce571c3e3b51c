"""The `lgkit` command: one subcommand per area, each registered by its own module."""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys

from lgkit.core.argtypes import OneLineParser

# Each module defines `register(subparsers) -> None`, adding its subcommands with
# `set_defaults(func=...)`; `func(args) -> int` returns the exit code. Only the module of the
# command being run is imported, so every command starts fast.
COMMAND_MODULES: dict[str, str] = {
    "compile": "lgkit.sw.tools.cli",
    "stf": "lgkit.sw.tools.cli",
    "bench-pipeline": "lgkit.sw.tools.bench_pipeline",
    "bench-engines": "lgkit.sw.tools.bench_engines",
    "switch": "lgkit.sw.switch.switch_main",
    "switch-cli": "lgkit.sw.switch.switch_main",
    "bench-switch": "lgkit.sw.tools.bench_switch",
    "bench-p4runtime": "lgkit.sw.tools.p4rt_load",
    "bench-tables": "lgkit.sw.tools.bench_tables",
    "soak-switch": "lgkit.sw.tools.soak_switch",
    "soak": "lgkit.sim.cli",
    "stress": "lgkit.sim.cli",
    "bench-stress": "lgkit.sim.cli",
    "diff-bmv2": "lgkit.control.diff_bmv2",
    "clean": "lgkit.net.cli",
    "demo": "lgkit.net.cli",
    "run": "lgkit.net.cli",
    "interrupt-test": "lgkit.net.cli",
    "fabric": "lgkit.fabric.cli",
    "exercise": "lgkit.course.cli",
    "toolchain": "lgkit.course.cli",
    "reproduce": "lgkit.reproduce.cli",
    "tofino": "lgkit.tofino.cli",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with `command`'s module registered, or every module when command is None."""
    parser = OneLineParser(
        prog="lgkit", description="LinkGuardian testbed kit: run in-network loss recovery."
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules = [COMMAND_MODULES[command]] if command else dict.fromkeys(COMMAND_MODULES.values())
    for name in modules:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    command = argv[0] if argv and argv[0] in COMMAND_MODULES else None
    parser = build_parser(command)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        return code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return stdout_closed()


def stdout_closed() -> int:
    """The reader of stdout went away (`lgkit stf -v ... | head`): end quietly with a shell's
    status for SIGPIPE; stdout is pointed at /dev/null so the exit's flush cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 128 + signal.SIGPIPE


if __name__ == "__main__":
    sys.exit(main())
