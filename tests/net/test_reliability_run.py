"""`lgkit run` with bad scenarios and options: one line `lgkit: error: ...`, exit 1, and nothing
built (no results folder, no network); YAML tags that would build Python objects are refused,
never executed. Needs no root: everything is checked before the root-only steps."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from testpaths import REPO

GOOD = "topology: fig7\nloss_rate: 0.01\nflow: {client: h1, server: h3, seconds: 2}\n"


def run(tmp_path: Path, scenario: str, *options: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "scenario.yaml"
    path.write_text(scenario)
    return subprocess.run([sys.executable, "-m", "lgkit.cli", "run", str(path), "--target",
                           "lxbr", "--results", str(tmp_path / "results"), *options],
                          cwd=REPO, capture_output=True, text=True, timeout=120)


def assert_one_line_error(done: subprocess.CompletedProcess[str], tmp_path: Path,
                          message: str) -> None:
    assert done.returncode == 1, done
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lgkit: error: "), done.stderr
    assert message in lines[0], lines[0]
    results = tmp_path / "results"
    assert not results.exists() or not any(results.iterdir())  # no run was started


@pytest.mark.parametrize(("scenario", "message"), [
    ("topology: fig7\nloss_rate: [0.01\n", "scenario.yaml:3:1: not a valid scenario YAML"),
    ("", "a scenario must be a mapping of settings, got an empty file"),
    ("- 1\n- 2\n", "a scenario must be a mapping of settings, got a YAML list"),
    ("just text\n", "got a YAML str"),
    ("!!python/object/apply:os.system ['touch {marker}']\n", "not a valid scenario YAML"),
    ("topology: !!python/object/new:collections.OrderedDict [[]]\n",
     "not a valid scenario YAML"),
    (GOOD.replace("server: h3", "server: h9"),
     "flow server 'h9' is not a host of topology fig7 (hosts: h1, h2, h3, h4)"),
    (GOOD.replace("client: h1", "client: h3"), "the flow's client and server are both 'h3'"),
    (GOOD.replace("seconds: 2", "seconds: -1"), "flow seconds must be a number in (0, 86400]"),
    (GOOD.replace("seconds: 2", "seconds: '2'"), "flow seconds must be a number"),
    (GOOD.replace("loss_rate: 0.01", "loss_rate: .nan"), "malformed scenario"),
    (GOOD + "target_loss: 0\n", "target_loss must be a number in (0, 1)"),
    (GOOD + "corruptd: {interval_s: 0}\n", "corruptd interval_s must be a number in (0, 3600]"),
    (GOOD.replace("topology: fig7", "topology: nowhere"), "no topology 'nowhere'"),
])
def test_bad_scenarios_are_one_line_errors(tmp_path, scenario, message):
    marker = tmp_path / "executed"
    done = run(tmp_path, scenario.replace("{marker}", str(marker)))
    assert_one_line_error(done, tmp_path, message)
    assert not marker.exists()  # the YAML's code never ran


@pytest.mark.parametrize(("options", "message"), [
    (("--loss", "1.5"), "--loss must be a number in [0, 1), got 1.5"),
    (("--loss", "-0.2"), "--loss must be a number in [0, 1), got -0.2"),
    (("--loss", "nan"), "--loss must be a number in [0, 1), got nan"),
    (("--loss", "inf"), "--loss must be a number in [0, 1), got inf"),
    (("--seconds", "-1"), "--seconds must be a number in (0, 86400], got -1.0"),
    (("--seconds", "0"), "--seconds must be a number in (0, 86400]"),
    (("--rate-mbps", "-5"), "--rate-mbps must be a number in (0, 100000], got -5.0"),
    (("--rate-mbps", "inf"), "--rate-mbps must be a number"),
])
def test_bad_options_are_one_line_errors(tmp_path, options, message):
    assert_one_line_error(run(tmp_path, GOOD, *options), tmp_path, message)


def test_an_unwritable_results_folder_is_refused_first(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    done = subprocess.run([sys.executable, "-m", "lgkit.cli", "run", "demo", "--target", "lxbr",
                           "--results", str(blocker / "runs")], cwd=REPO, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip() == f"lgkit: error: results folder {blocker}/runs: Not a directory"
