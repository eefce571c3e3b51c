"""Experiment lifecycle: results folder, watchdog, signal handling and cleanup around a run."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lgkit.core import naming
from lgkit.core.lock import machine_lock
from lgkit.measure.results import RunStore
from lgkit.net.lifecycle.cleanup import clean
from lgkit.net.lifecycle.reaper import start_reaper, stop_reaper


class Terminated(KeyboardInterrupt):
    """SIGTERM, turned into an exception so that the run unwinds and cleans up."""


class SignalGuard:
    """SIGINT and SIGTERM during a run. The first one raises (KeyboardInterrupt, Terminated)
    so that the run unwinds; any later one, and any during cleanup, is only noted: repeated
    Ctrl-C cannot cut the cleanup short (SIGKILL still can; then the watchdog cleans)."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.cleaning = False
        self.raised = False
        self._previous = {signum: signal.signal(signum, self._handle) for signum in self.SIGNALS}

    def _handle(self, signum: int, frame: object) -> None:
        if self.cleaning or self.raised:
            # os.write, not print: a handler may run while the main thread is inside a print
            os.write(2, f"lgkit: {signal.Signals(signum).name} noted; cleaning up, please "
                        "wait\n".encode())
            return
        self.raised = True
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise Terminated(f"signal {signum}")

    def restore(self) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)


@contextmanager
def experiment(name: str, metadata: dict[str, Any], root: Path | None = None,
               log=print) -> Iterator[RunStore]:
    """Run a block as one experiment (holding the machine's network lock).

    The run's folder is `running` until the block ends: `complete` on success, `incomplete`
    (with the reason) on Ctrl-C, SIGTERM or an exception. Cleanup always runs, and repeated
    signals wait for it (SignalGuard). A watchdog process, stopped only once cleanup is done,
    marks the run incomplete and cleans up if this process dies first (even by SIGKILL); if
    both die, `lgkit clean` finds the run by its record in /run/lgkit and marks it.
    """
    with machine_lock() as lock_fd:
        guard = SignalGuard()
        try:
            yield from _run(name, metadata, root, log, lock_fd, guard)
        finally:
            guard.restore()


def _run(name: str, metadata: dict[str, Any], root: Path | None, log, lock_fd: int,
         guard: SignalGuard) -> Iterator[RunStore]:
    store = RunStore(name, metadata, root)
    log(f"results: {store.path}")
    record = naming.write_run_record(os.getpid(), store.path)
    reaper = start_reaper(store.path, lock_fd)
    try:
        yield store
    except KeyboardInterrupt as exc:
        guard.cleaning = True
        store.finish("incomplete", f"interrupted ({type(exc).__name__})")
        raise
    except BaseException as exc:
        guard.cleaning = True
        store.finish("incomplete", f"crashed: {exc!r}")
        raise
    else:
        guard.cleaning = True
        store.finish("complete")
    finally:
        guard.cleaning = True
        if store.metadata["status"] == "running":  # a signal between the block and finish
            store.finish("incomplete", "interrupted (KeyboardInterrupt)")
        report = clean(spare=frozenset({reaper.pid}))  # the watchdog stays until we are done
        if report.processes or report.interfaces or report.nft_tables:
            log(report.summary())
        stop_reaper(reaper)
        record.unlink(missing_ok=True)
