"""`lgkit bench-switch`: the side-by-side table (min / median / max, ratio of the medians), the
BMv2 command line, and one quick run on both switches (root; BMv2 part skips without it)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from testpaths import REPO

from lgkit.sw.tools.bench_switch import Bmv2UnderTest, HostPair, side_by_side_table

BASIC = str(REPO / "p4" / "basic.p4")


def test_side_by_side_table_gives_min_median_max_and_ratio() -> None:
    results = {
        "built-in": {"tcp_mbps": [500.0, 550.0, 600.0], "udp1400_rx_pps": [60e3, 50e3, 55e3],
                     "udp64_rx_pps": [None], "udp1400_tx_pps": [1e5], "udp64_tx_pps": [2e5]},
        "BMv2": {"tcp_mbps": [200.0, 275.0, 300.0], "udp1400_rx_pps": [25e3, 20e3, 30e3],
                 "udp64_rx_pps": [30e3], "udp1400_tx_pps": [1e5], "udp64_tx_pps": [0.0]},
    }
    lines = side_by_side_table(results).splitlines()
    assert "built-in min / median / max" in lines[0] and "built-in / BMv2 (medians)" in lines[0]
    tcp = next(line for line in lines if line.startswith("TCP Mb/s"))
    assert "500 / 550 / 600" in tcp and "200 / 275 / 300" in tcp and tcp.endswith("2.00x")
    udp = next(line for line in lines if line.startswith("UDP 1400 B pps received"))
    assert "50,000 / 55,000 / 60,000" in udp and udp.endswith("2.20x")
    small = next(line for line in lines if line.startswith("UDP 64 B pps received"))
    assert "n/a" in small and small.endswith("n/a")  # no built-in value: no ratio
    assert next(line for line in lines if line.startswith("UDP 64 B pps sent")).endswith("n/a")


def test_bmv2_runs_on_its_own_ports_and_localhost(tmp_path: Path, monkeypatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("simple_switch_grpc", "simple_switch_CLI", "p4c-bm2-ss"):
        (bin_dir / tool).write_text("#!/bin/sh\n")
        (bin_dir / tool).chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    sut = Bmv2UnderTest(BASIC, str(tmp_path))
    assert sut.missing() == []
    cmd = sut.command(HostPair("x"))
    assert cmd[0].endswith("simple_switch_grpc") and "1@lgkxs1" in cmd and "2@lgkxs2" in cmd
    assert cmd[cmd.index("--thrift-port") + 1] == sut.thrift != "9090"
    assert cmd[cmd.index("--notifications-addr") + 1].startswith(f"ipc://{tmp_path}")
    assert cmd[cmd.index("--log-level") + 1] == "off"
    assert cmd[cmd.index("--grpc-server-addr") + 1].startswith("127.0.0.1:")


def test_bmv2_missing_tools_are_named(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert Bmv2UnderTest(BASIC, str(tmp_path)).missing() == [
        "p4c-bm2-ss", "simple_switch_CLI", "simple_switch_grpc"]


@pytest.mark.root
@pytest.mark.root
@pytest.mark.skipif(shutil.which("iperf3") is None, reason="iperf3 not installed")
def test_quick_run_prints_both_switches_side_by_side() -> None:
    done = subprocess.run([sys.executable, "-m", "lgkit.cli", "bench-switch", "--quick",
                           "--repeat", "1"], capture_output=True, text=True, timeout=600,
                          check=False)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    table = out[out.index("measure"):]
    assert "built-in min / median / max" in table
    if Bmv2UnderTest(BASIC, "/tmp").missing():
        assert "BMv2: not installed" in out
        print("BMv2 not installed: the built-in switch alone")
    else:
        assert "BMv2 min / median / max" in table and "built-in / BMv2 (medians)" in table
        tcp = next(line for line in table.splitlines() if line.startswith("TCP Mb/s"))
        assert tcp.endswith("x"), tcp  # both switches carried TCP: a ratio
