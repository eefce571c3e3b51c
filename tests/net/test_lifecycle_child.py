"""stop_process on real child processes: SIGTERM obeyed, SIGTERM ignored (killed), a first
signal other than SIGTERM, an already exited child, and the pid file removed in every case."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from lgkit.core.child import stop_process

IGNORES_SIGTERM = ("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                   "print('ready', flush=True); time.sleep(60)")
REPORTS_ON_SIGINT = ("import time\ntry:\n    print('ready', flush=True); time.sleep(60)\n"
                     "except KeyboardInterrupt:\n    print('summary', flush=True)")


def _child(code: str) -> subprocess.Popen[str]:
    """A Python child running `code`, started once it printed 'ready' (its handlers are set)."""
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


def _pid_file(tmp_path: Path, proc: subprocess.Popen | None) -> Path:
    path = tmp_path / "child.pid"
    path.write_text(f"{proc.pid if proc else 0} 0\n")
    return path


def test_a_child_that_obeys_sigterm_is_not_killed(tmp_path):
    proc = _child("import time; print('ready', flush=True); time.sleep(60)")
    pid_file = _pid_file(tmp_path, proc)
    stop_process(proc, 5.0, pid_file)
    assert proc.returncode == -signal.SIGTERM
    assert not pid_file.exists()


def test_a_child_that_ignores_sigterm_is_killed_after_the_grace_period(tmp_path):
    proc = _child(IGNORES_SIGTERM)
    pid_file = _pid_file(tmp_path, proc)
    start = time.monotonic()
    stop_process(proc, 0.5, pid_file)
    assert time.monotonic() - start >= 0.5
    assert proc.returncode == -signal.SIGKILL
    assert not pid_file.exists()


def test_a_first_signal_other_than_sigterm_lets_the_child_report(tmp_path):
    proc = _child(REPORTS_ON_SIGINT)
    pid_file = _pid_file(tmp_path, proc)
    stop_process(proc, 5.0, pid_file, first=signal.SIGINT)
    assert proc.returncode == 0
    assert proc.stdout is not None and proc.stdout.read().strip() == "summary"
    assert not pid_file.exists()


def test_an_exited_child_gets_no_signal_and_its_pid_file_goes(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    proc.wait(10)
    pid_file = _pid_file(tmp_path, proc)
    stop_process(proc, 5.0, pid_file)
    assert proc.returncode == 3
    assert not pid_file.exists()


def test_no_process_and_no_pid_file_are_fine(tmp_path):
    pid_file = _pid_file(tmp_path, None)
    stop_process(None, 5.0, pid_file)
    assert not pid_file.exists()
    stop_process(None, 5.0)
    stop_process(None, 5.0, tmp_path / "never-written.pid")  # no file: no error
