"""Stopping a child process the kit started: a signal, a grace period, SIGKILL, its pid file."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path
from typing import Any

KILL_WAIT_S = 5.0
"How long to wait for a SIGKILLed process to be reaped (only a stuck kernel call delays it)."


def stop_process(proc: subprocess.Popen[Any] | None, grace_s: float, pid_file: Path | None = None,
                 first: signal.Signals = signal.SIGTERM) -> None:
    """Send `first` to a running child, give it `grace_s` seconds to exit, then SIGKILL and
    reap it; then remove its pid file (kept if even SIGKILL did not end it in KILL_WAIT_S)."""
    if proc is not None and proc.poll() is None:
        proc.send_signal(first)
        try:
            proc.wait(grace_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(KILL_WAIT_S)
    if pid_file is not None:
        pid_file.unlink(missing_ok=True)
