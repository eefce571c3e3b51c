"""`lgkit reproduce NAME [options]` and `lgkit reproduce --list`."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from lgkit.reproduce import registry
from lgkit.reproduce.context import DEFAULT_TIME_LIMIT_S, QUICK_TIME_LIMIT_S


def register(subparsers: Any) -> None:
    """Add the reproduce subcommand."""
    parser = subparsers.add_parser(
        "reproduce", help="rerun one of the paper's experiments, scaled to this machine",
        usage="lgkit reproduce NAME [--quick] [--target builtin|bmv2] [options]\n"
              "       lgkit reproduce --list\n"
              "       lgkit reproduce NAME --help",
        description="Rerun one of the paper's experiments and print our numbers beside the "
                    f"paper's, with the scale used. A run ends within {DEFAULT_TIME_LIMIT_S:g} s "
                    f"({QUICK_TIME_LIMIT_S:g} s with --quick) and leaves a results folder "
                    "(metadata.json, tidy CSV tables, summary.csv). See docs/reproduce.md.")
    parser.add_argument("name", nargs="?", metavar="NAME", help="the experiment (see --list)")
    parser.add_argument("--list", action="store_true", help="list the experiments")
    parser.add_argument("options", nargs=argparse.REMAINDER,
                        help="the experiment's options (lgkit reproduce NAME --help)")
    parser.set_defaults(func=_main)


def listing() -> str:
    """One line per experiment."""
    entries = registry.ENTRIES
    if not entries:
        return "no experiments registered yet"
    width = max(len(e.name) for e in entries)
    return "\n".join(
        f"{e.name:<{width}}  {e.paper:<10}  {'testbed' if e.network else 'virtual time':<12}  "
        f"{e.summary}" for e in entries)


def _main(args: argparse.Namespace) -> int:
    if args.list or not args.name:
        print(listing())
        return 0 if args.list else 2
    from lgkit.reproduce.context import ReproduceError
    from lgkit.reproduce.registry import UnknownExperiment, lookup
    from lgkit.reproduce.runner import reproduce

    try:
        reproduce(lookup(args.name), args.options)
    except (UnknownExperiment, ReproduceError) as exc:
        print(f"lgkit: error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:  # writing the results: a full disk, a read-only file system
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"lgkit: error: results: {where}{exc.strerror or exc}", file=sys.stderr)
        return 1
    return 0
