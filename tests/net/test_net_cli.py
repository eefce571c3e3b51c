"""`lgkit clean`, `lgkit run` and `lgkit demo` on the command line: clear errors, no tracebacks."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from test_net_support import network_lock
from testpaths import REPO


def lgkit(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lgkit.cli", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.root
def test_clean_reports_what_it_removed() -> None:
    done = lgkit("clean", "--wait")  # after any run in progress (another engineer's)
    assert done.returncode == 0
    assert done.stdout.startswith("clean: ") and "interfaces" in done.stdout


@pytest.mark.root
def test_unknown_scenario_is_one_clear_error() -> None:
    done = lgkit("run", "no-such-scenario", "--target", "lxbr")
    assert done.returncode == 1
    assert done.stderr.startswith("lgkit: error: no scenario 'no-such-scenario' (known: ")
    assert "Traceback" not in done.stderr


@pytest.mark.root
def test_malformed_scenario_is_one_clear_error(tmp_path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("topology: fig7\nloss_rate: 2\nflow: {client: h1, server: h3}\n")
    done = lgkit("run", str(bad), "--target", "lxbr")
    assert done.returncode == 1 and "malformed scenario" in done.stderr
    assert "Traceback" not in done.stderr


def test_unknown_target_is_rejected_by_the_parser() -> None:
    done = lgkit("demo", "--target", "tofino")
    assert done.returncode == 2 and "invalid choice: 'tofino'" in done.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="checks the message for non-root users")
def test_non_root_gets_a_clear_error() -> None:
    done = lgkit("demo")
    assert done.returncode == 1 and "needs root" in done.stderr


@pytest.mark.root
def test_bmv2_without_bmv2_says_what_is_missing() -> None:
    if shutil.which("simple_switch_grpc") and shutil.which("p4c"):
        pytest.skip("BMv2 is installed here")
    done = lgkit("demo", "--target", "bmv2")
    assert done.returncode == 1
    assert done.stderr.startswith("lgkit: error: bmv2: ") and "not installed" in done.stderr


@pytest.mark.root
def test_a_program_without_the_route_table_is_one_line(tmp_path) -> None:
    program = tmp_path / "noroutes.p4"
    program.write_text((REPO / "p4" / "basic.p4").read_text().replace("ipv4_lpm", "routes"))
    done = lgkit("demo", "--program", str(program), "--results", str(tmp_path / "runs"),
                 "--seconds", "1")
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines()[-1] == (
        f"lgkit: error: program {program}: no table named *ipv4_lpm, where the testbed "
        "installs its routes")
    assert "Traceback" not in done.stderr
    meta, = (tmp_path / "runs").glob("*/metadata.json")
    assert '"status": "incomplete"' in meta.read_text()


@pytest.mark.root
def test_an_interface_of_ours_existing_is_one_line(tmp_path) -> None:
    """A name clash (an interface of the demo's node lgh3 exists, held by no process): one
    line naming it, nothing built."""
    with network_lock():  # after the cleanup of any run before (it removes lg* interfaces)
        made = subprocess.run(["ip", "link", "add", "lgh3-eth9", "type", "veth", "peer",
                               "name", "lgclash-peer"], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot add lgh3-eth9: {made.stderr.strip()}")
    try:
        done = lgkit("demo", "--results", str(tmp_path), "--seconds", "1")
    finally:
        subprocess.run(["ip", "link", "del", "lgh3-eth9"], capture_output=True)
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines()[-1] == (
        "lgkit: error: interface lgh3-eth9 exists, held by no process (left by a killed run: "
        "`lgkit clean` removes it)")
    assert "Traceback" not in done.stderr
