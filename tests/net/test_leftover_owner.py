"""Whose leftover a kit process is: this test's child or an orphan counts as left behind, a
process that another live run started does not (assert_machine_clean beside other runs)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator

import pytest
from test_net_support import another_runs

from lgkit.net.lifecycle.cleanup import parent_chain


def _wait_pid(path: str) -> int:
    """The pid a shell wrote to `path` (it writes it once the process runs)."""
    for _ in range(500):
        text = open(path).read().strip() if os.path.exists(path) else ""
        if text:
            return int(text)
        time.sleep(0.01)
    raise AssertionError("no pid written")


@pytest.fixture
def orphan_runner(tmp_path) -> Iterator[tuple[int, int]]:
    """(runner, its child): a shell that outlived its own parent (so pid 1 adopted it, like a
    run started outside this test) and the sleep it started."""
    child_file, runner_file = tmp_path / "child", tmp_path / "runner"
    subprocess.run(["sh", "-c", f"(echo $(exec sh -c 'echo $PPID') > {runner_file}; "
                    f"sleep 30 & echo $! > {child_file}; wait) >/dev/null 2>&1 &"], check=True)
    child, runner = _wait_pid(str(child_file)), _wait_pid(str(runner_file))
    yield runner, child
    for pid in (child, runner):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_a_process_of_a_run_started_elsewhere_is_that_runs(orphan_runner) -> None:
    runner, child = orphan_runner
    assert parent_chain(child)[:2] == [child, runner]
    assert os.getpid() not in parent_chain(child)
    assert another_runs(child, {child})


def test_an_orphaned_kit_tree_is_a_leftover(orphan_runner) -> None:
    runner, child = orphan_runner
    assert not another_runs(child, {child, runner})
    assert not another_runs(runner, {child, runner})


def test_this_tests_child_is_a_leftover() -> None:
    proc = subprocess.Popen(["sleep", "30"])
    try:
        assert parent_chain(proc.pid)[:2] == [proc.pid, os.getpid()]
        assert not another_runs(proc.pid, {proc.pid})
    finally:
        proc.kill()
        proc.wait()


def test_a_gone_process_has_no_parents() -> None:
    proc = subprocess.Popen(["true"])
    proc.wait()
    assert parent_chain(proc.pid) == []
