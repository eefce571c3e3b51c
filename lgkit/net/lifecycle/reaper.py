"""Watchdog started by each run: if the runner dies unfinished (even SIGKILL), clean up after it."""

from __future__ import annotations

import argparse
import os
import select
import subprocess
import sys
from pathlib import Path

from lgkit.core import naming
from lgkit.core.child import stop_process
from lgkit.measure.results import mark_incomplete_if_running
from lgkit.net.lifecycle.cleanup import clean


def start_reaper(run_dir: Path, lock_fd: int) -> subprocess.Popen:
    """Start a watchdog for this process in its own session (it outlives a SIGKILL of ours).

    It inherits the machine lock's descriptor, so the lock stays held until it has cleaned.
    """
    proc = subprocess.Popen(
        [sys.executable, "-m", "lgkit.net.lifecycle.reaper", "--pid", str(os.getpid()),
         "--run-dir", str(run_dir)],
        start_new_session=True, stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(lock_fd,),
    )
    naming.write_pid("reaper", str(os.getpid()), proc.pid)
    return proc


def stop_reaper(proc: subprocess.Popen) -> None:
    """Tell the watchdog the run ended properly and its cleanup is done."""
    stop_process(proc, 5.0, naming.pid_file("reaper", str(os.getpid())))


def watch(pid: int, run_dir: Path) -> None:
    """Block until `pid` exits; then mark the run incomplete if it is still `running`, and
    clean up. A runner that finished its cleanup stops us before it exits (stop_reaper), so
    reaching this point means it died first: during the run or in the middle of its cleanup."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        fd = None
    if fd is not None:
        select.select([fd], [], [])
        os.close(fd)
    try:
        mark_incomplete_if_running(run_dir, "the runner died before finishing (killed)")
    except (OSError, ValueError):
        pass  # no readable metadata: still clean up
    naming.pid_file("reaper", str(pid)).unlink(missing_ok=True)
    clean()


def main() -> None:
    """Entry point of the watchdog process."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--run-dir", type=Path, required=True)
    args = parser.parse_args()
    watch(args.pid, args.run_dir)


if __name__ == "__main__":
    main()
