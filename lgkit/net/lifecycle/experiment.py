"""Experiment lifecycle: results folder, watchdog, signal handling and cleanup around a run."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lgkit.measure.results import RunStore
from lgkit.net.lifecycle.cleanup import clean
from lgkit.net.lifecycle.lock import machine_lock
from lgkit.net.lifecycle.reaper import start_reaper, stop_reaper


class Terminated(KeyboardInterrupt):
    """SIGTERM, turned into an exception so that the run unwinds and cleans up."""


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated(f"signal {signum}")


@contextmanager
def experiment(name: str, metadata: dict[str, Any], root: Path | None = None,
               log=print) -> Iterator[RunStore]:
    """Run a block as one experiment (holding the machine's network lock).

    The run's folder is `running` until the block ends: `complete` on success, `incomplete`
    (with the reason) on Ctrl-C, SIGTERM or an exception. A watchdog process marks it
    incomplete and cleans up if this process is killed outright. Cleanup always runs.
    """
    with machine_lock() as lock_fd:
        yield from _run(name, metadata, root, log, lock_fd)


def _run(name: str, metadata: dict[str, Any], root: Path | None, log,
         lock_fd: int) -> Iterator[RunStore]:
    store = RunStore(name, metadata, root)
    log(f"results: {store.path}")
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    reaper = start_reaper(store.path, lock_fd)
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
    finally:
        stop_reaper(reaper)
        report = clean()
        if report.processes or report.interfaces or report.nft_tables:
            log(report.summary())
        signal.signal(signal.SIGTERM, previous)
