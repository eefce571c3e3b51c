"""Run one registered experiment: options, results folder, time bound, tables, wall time."""

from __future__ import annotations

import argparse
import errno
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lgkit.core.argtypes import SEED, OneLineParser, ranged
from lgkit.core.targets import DEFAULT_TARGET, P4_TARGETS
from lgkit.core.writable import check_writable
from lgkit.measure.results import RESULTS_ROOT, RunStore, read_metadata
from lgkit.reproduce.context import (
    DEFAULT_TIME_LIMIT_S,
    QUICK_TIME_LIMIT_S,
    Context,
    Log,
    ReproduceError,
)
from lgkit.reproduce.registry import Entry, load
from lgkit.reproduce.report import Comparison
from lgkit.sw.atomic_file import write_atomic

DISK_ERRORS = (errno.ENOSPC, errno.EROFS, errno.EDQUOT, errno.EFBIG, errno.EIO)
"""An OSError without a file name but with one of these came from writing the results."""


def options_parser(entry: Entry, module: Any) -> argparse.ArgumentParser:
    """The experiment's command line: the common options, then its own (add_arguments)."""
    parser = OneLineParser(
        prog=f"lgkit reproduce {entry.name}",
        description=f"{entry.paper}: {entry.summary}. {(module.__doc__ or '').strip()}")
    common = parser.add_argument_group("every experiment")
    common.add_argument("--quick", action="store_true",
                        help=f"the smallest run that shows the effect "
                             f"(within {QUICK_TIME_LIMIT_S:g} s)")
    common.add_argument("--target", choices=P4_TARGETS, default=DEFAULT_TARGET,
                        help="switch implementation (default builtin)")
    common.add_argument("--seed", type=SEED, default=1,
                        help="seed of every random choice")
    common.add_argument("--time-limit", type=ranged(float, 0.0, 86_400.0, above=True), metavar="S",
                        help=f"time bound in seconds (default {DEFAULT_TIME_LIMIT_S:g}, "
                             f"--quick {QUICK_TIME_LIMIT_S:g})")
    common.add_argument("--results", metavar="DIR",
                        help="folder that receives the run's folder (default measurements/runs)")
    if hasattr(module, "add_arguments"):
        module.add_arguments(parser.add_argument_group(f"{entry.name}"))
    return parser


def reproduce(entry: Entry, argv: list[str], log: Log = print) -> Path:
    """Parse the experiment's options and run it; returns its results folder."""
    module = load(entry)
    options = options_parser(entry, module).parse_args(argv)
    problem = module.preflight(options) if hasattr(module, "preflight") else None
    if problem:
        raise ReproduceError(problem)
    limit = options.time_limit or (QUICK_TIME_LIMIT_S if options.quick else DEFAULT_TIME_LIMIT_S)
    metadata = {"experiment": entry.name, "paper": entry.paper, "quick": options.quick,
                "target": options.target, "seed": options.seed, "time_limit_s": limit,
                "options": vars(options),
                "command": shlex.join(["lgkit", "reproduce", entry.name, *argv]),
                "code": code_version()}
    root = Path(options.results) if options.results else None
    try:
        check_writable(root or RESULTS_ROOT)
    except ValueError as exc:
        raise ReproduceError(str(exc)) from None
    folders: list[Path] = []
    try:
        return _run(entry, module, options, metadata, root, log, folders.append)
    except OSError as exc:
        for folder in folders:
            _drop_unfinished(folder)
        if exc.filename:
            raise
        if exc.errno not in DISK_ERRORS:  # e.g. a Dask scheduler that cannot be reached
            raise ReproduceError(f"{entry.name}: {exc}") from None
        where = folders[0] if folders else root or RESULTS_ROOT
        raise OSError(exc.errno, exc.strerror, str(where)) from None


def _run(entry: Entry, module: Any, options: argparse.Namespace, metadata: dict[str, Any],
         root: Path | None, log: Log, made: Callable[[Path], None]) -> Path:
    began = time.monotonic()
    scale = "quick" if options.quick else "default"
    with _results(entry, f"{entry.name}-{scale}-{options.target}", metadata, root, log) as store:
        made(store.path)
        ctx = Context(entry.name, options.quick, options.target, options.seed,
                      metadata["time_limit_s"], store, options, log)
        try:
            comparisons: list[Comparison] = list(module.run(ctx))
        except tuple(getattr(module, "EXPECTED", ())) as exc:
            raise ReproduceError(f"{entry.name}: {exc}") from exc
        records = [record for c in comparisons for record in c.tidy(entry.name)]
        store.write_table("summary", records)
        report = "\n".join(comparison.format() for comparison in comparisons)
        log(report)
        wall = time.monotonic() - began
        store.note(wall_s=round(wall, 1), checks=[
            {"text": c.text, "passed": c.passed} for cmp in comparisons for c in cmp.checks])
        last = (f"{entry.name}: {wall:.0f} s wall ({scale} scale, {options.target}); "
                f"results {store.path}")
        write_atomic(store.path / "report.txt",
                    f"$ {metadata['command']}\n{report}\n{last}\n")
        log(last)
        return store.path


def code_version() -> str:
    """The kit's git commit (with '+changes' if the tree differs from it), or 'unknown'."""
    repo = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short=12", "HEAD"],
                              capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--",
                                "lgkit", "p4"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    if head.returncode != 0:
        return "unknown"
    return head.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")


def _drop_unfinished(folder: Path) -> None:
    """Remove a run folder that a failed write (a full disk) left unable to say how it ended."""
    try:
        unfinished = read_metadata(folder).get("status") == "running"
    except (OSError, ValueError):
        unfinished = True
    if unfinished:
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def _results(entry: Entry, name: str, metadata: dict[str, Any], root: Path | None,
             log: Log) -> Iterator[RunStore]:
    """A testbed experiment runs inside the network lifecycle (machine lock, watchdog,
    cleanup); a virtual-time one only needs its folder marked complete or incomplete."""
    if entry.network:
        from lgkit.net.lifecycle.experiment import experiment

        with experiment(name, metadata, root=root, log=log) as store:
            yield store
        return
    store = RunStore(name, metadata, root)
    log(f"results: {store.path}")
    try:
        yield store
    except KeyboardInterrupt as exc:
        store.finish("incomplete", f"interrupted ({type(exc).__name__})")
        raise
    except BaseException as exc:
        store.finish("incomplete", f"crashed: {exc!r}")
        raise
    else:
        store.finish("complete")
