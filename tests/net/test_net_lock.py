"""The machine's network lock: a waiting run says whom it waits for; `lgkit clean` refuses
while a run holds the lock, naming the run's pid."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from testpaths import REPO

from lgkit.core.lock import machine_lock

LGKIT = [sys.executable, "-m", "lgkit.cli"]
ROOT = REPO
WAITER = "from lgkit.core.lock import machine_lock\nwith machine_lock(): print('got it')"


@pytest.mark.root
def test_clean_refuses_while_a_run_holds_the_lock() -> None:
    with machine_lock():
        done = subprocess.run([*LGKIT, "clean"], capture_output=True, text=True, cwd=ROOT,
                              timeout=60)
    assert done.returncode == 1, done
    assert done.stdout == ""
    line, = done.stderr.splitlines()
    assert line.startswith("lgkit: error: the network lock is held by "
                           f"pid {os.getpid()} (")


@pytest.mark.root
def test_a_waiting_run_names_the_holder_at_once() -> None:
    with machine_lock():
        waiter = subprocess.Popen([sys.executable, "-c", WAITER], cwd=ROOT, text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            first = waiter.stderr.readline()  # said before waiting: we still hold the lock
        except BaseException:
            waiter.kill()
            raise
    out, err = waiter.communicate(timeout=60)
    assert first.startswith(f"lgkit: waiting for the network lock, held by pid {os.getpid()} (")
    assert out == "got it\n" and waiter.returncode == 0, err

