"""A run killed midway (SIGINT or SIGKILL) leaves nothing behind and keeps partial results."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_net_support import assert_machine_clean, named_namespaces
from testpaths import REPO

from lgkit.core.naming import node_name
from lgkit.core.topology import load_spec
from lgkit.measure.results import read_metadata, read_table

SCENARIO = """
topology: fig7
loss_rate: 0.05
flow: {client: h1, server: h3, congestion: cubic, seconds: 60}
phases: [lg_off]
"""


def _start_run(tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    scenario = tmp_path / "killme.yaml"
    scenario.write_text(SCENARIO)
    proc = subprocess.Popen(
        [sys.executable, "-m", "lgkit.cli", "run", str(scenario), "--target", "lxbr",
         "--results", str(tmp_path / "runs")],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    run_dir = None
    deadline = time.monotonic() + 60
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.startswith("results: "):
            run_dir = Path(line.split(" ", 1)[1].strip())
        if line.startswith("phase lg_off"):
            break
    assert run_dir is not None, "the run did not start its flow"
    time.sleep(2.0)  # mid-flow: iperf3 running, nft rule in place, samples written
    return proc, run_dir


def _wait_clean(timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            assert_machine_clean()
            return
        except AssertionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


@pytest.mark.root
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["sigint", "sigkill"])
def test_killed_run_leaves_nothing_and_keeps_partial_results(tmp_path, sig) -> None:
    proc, run_dir = _start_run(tmp_path)
    nft_before = subprocess.run(["nft", "list", "tables"], capture_output=True, text=True).stdout
    assert "lgkit_inj_" in nft_before
    os.kill(proc.pid, sig)
    proc.wait(30)
    _wait_clean(20)
    spec = load_spec("fig7")
    kit_nodes = {node_name(n) for n in spec.hosts + spec.switches}
    assert not named_namespaces() & kit_nodes  # Mininet hosts are unnamed; none may linger
    meta = read_metadata(run_dir)
    assert meta["status"] == "incomplete"
    assert meta["reason"]
    samples = read_table(run_dir, "counters")
    assert len(samples) >= 2 and int(samples[-1]["b"]) > int(samples[0]["b"])
    assert json.loads((run_dir / "metadata.json").read_text())["injector"].startswith("nft")
