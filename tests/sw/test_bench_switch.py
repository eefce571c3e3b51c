"""`lgkit bench-switch`: the side-by-side table (min / median / max, ratio of the medians), the
BMv2 command line, every row's UDP counted alike, the port counter on real veths through each
hook (tcx, generic XDP; root, each skips where the kernel lacks it), and one quick run on both
switches (root; BMv2 part skips without it)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from testpaths import REPO

from lgkit.sw.tools import bench_switch
from lgkit.sw.tools.bench_switch import (
    BarePair,
    Bmv2UnderTest,
    HostPair,
    port_hook,
    side_by_side_table,
    stop_process,
)
from lgkit.sw.tools.udp_blast import programs

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
@pytest.mark.skipif(shutil.which("iperf3") is None, reason="iperf3 not installed")
def test_quick_run_prints_both_switches_side_by_side() -> None:
    done = subprocess.run([sys.executable, "-m", "lgkit.cli", "bench-switch", "--quick",
                           "--repeat", "1"], capture_output=True, text=True, timeout=600,
                          check=False)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    table = out[out.index("measure"):]
    assert "built-in min / median / max" in table
    said = next(line for line in out.splitlines() if line.startswith("UDP received:"))
    assert any(f"counted at h2's port ({where}" in said  # what the receiver counts, where
               for where in bench_switch.PORT_HOOKS.values()), said
    port = next(line for line in table.splitlines()
                if line.startswith("UDP 64 B pps received at h2's port"))
    assert "n/a" not in port, port
    if Bmv2UnderTest(BASIC, "/tmp").missing():
        assert "BMv2: not installed" in out
        print("BMv2 not installed: the built-in switch alone")
    else:
        assert "BMv2 min / median / max" in table and "built-in / BMv2 (medians)" in table
        tcp = next(line for line in table.splitlines() if line.startswith("TCP Mb/s"))
        assert tcp.endswith("x"), tcp  # both switches carried TCP: a ratio


def test_every_row_counts_udp_alike_at_port_and_by_socket(monkeypatch) -> None:
    runs: list[tuple[int, bool, float | None, str]] = []

    def fake_udp(pair: HostPair, size: int, seconds: float, at_port: bool = False,
                 offered_pps: float | None = None, hook: str = "auto"):
        runs.append((size, at_port, offered_pps, hook))
        return (1000.0 * len(runs), 2000.0)

    monkeypatch.setattr(bench_switch, "udp_rate", fake_udp)
    monkeypatch.setattr(bench_switch, "tcp_rate", lambda pair, seconds: 10.0)
    results = bench_switch.measure(HostPair("x"), 1.0, None, repeat=2, offered_pps=3e5,
                                   hook="xdp")
    assert runs == [(1400, True, 3e5, "xdp"), (64, True, 3e5, "xdp"),
                    (64, False, 3e5, "xdp")] * 2
    assert results["udp64_rx_pps"] == [2000.0, 5000.0]
    assert results["udp64sock_rx_pps"] == [3000.0, 6000.0]
    assert results["udp64_cpu_us"] == [None, None]  # no switch: no CPU per frame
    table = side_by_side_table({"built-in": results, "veth": results})
    assert "UDP 64 B pps received at h2's port" in table
    assert "UDP 64 B pps received by h2's UDP socket" in table


def _receiver() -> str:
    native = programs()
    if native is None:
        pytest.skip("no C compiler: the C receiver is not built")
    return native[1]


@pytest.mark.parametrize(("port", "hook", "missing"), [
    ("lgknosuch0", "auto", "no such interface"), ("lo", "tc", "no such hook (auto, tcx or xdp)")])
def test_port_counter_missing_interface_or_hook_is_one_line(port: str, hook: str,
                                                            missing: str) -> None:
    done = subprocess.run([_receiver(), "9000", "1", port, hook], capture_output=True,
                          text=True, timeout=30, check=False)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == f"cannot count at port {port}: {missing}\n"


SEND = """
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(b"x" * 22, (sys.argv[1], 9000))
time.sleep(0.5)
for _ in range(200):
    s.sendto(b"x" * 22, (sys.argv[1], 9000))
for _ in range(20):
    s.sendto(b"y" * 22, (sys.argv[1], 9001))
"""

LISTEN = """
import socket, sys
socks = []
for port in (9000, 9001):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", port))
    s.settimeout(0.2)
    socks.append(s)
print("listening", flush=True)
sys.stdin.readline()
got = []
for s in socks:
    n = 0
    try:
        while True:
            s.recv(100)
            n += 1
    except TimeoutError:
        got.append(n)
print(got)
"""


def _attaches(pair: HostPair, hook: str) -> None:
    """The bench's own probe attaches the counter through `hook`; skips with one line naming
    the hook where this kernel lacks it (its support tried, not its version read)."""
    try:
        assert port_hook(pair, hook) == hook
    except RuntimeError as exc:
        if "not on this kernel" not in str(exc):
            raise
        pytest.skip(f"{hook} is not on this kernel: {exc}")


@pytest.mark.root
@pytest.mark.parametrize("hook", ["tcx", "xdp"])
def test_port_counter_counts_and_drops_the_bench_datagrams_only(hook: str) -> None:
    """At h2's port, through either hook: every datagram to the bench's port counted (and none
    of another port's), dropped before h2's IP stack (h2's socket on that port gets none),
    other frames passed (ARP, the other port's datagrams reach their socket); the rate's count
    runs between the first and the last reads that saw the count move (the first datagram,
    0.5 s before the rest, opens it)."""
    receiver = _receiver()
    with BarePair("t") as pair:
        _attaches(pair, hook)
        counter = pair.popen(pair.ns2, receiver, "9000", "1", "eth0", hook)
        listen = subprocess.Popen(["ip", "netns", "exec", pair.ns2, sys.executable, "-c",
                                   LISTEN], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True)
        try:
            assert counter.stdout is not None and listen.stdout is not None
            assert counter.stdout.readline().strip() == f"listening {hook}"
            assert listen.stdout.readline().strip() == "listening"
            pair.ns(pair.ns1, sys.executable, "-c", SEND, pair.H2_IP)
            out, err = counter.communicate(timeout=30)
            sockets, _ = listen.communicate("\n", timeout=30)
        finally:
            stop_process(counter)
            stop_process(listen)
    result = json.loads(out)
    assert result["total"] == 201, (result, err)
    assert result["count"] == 200 and 0 < result["seconds"] < 1.0, result
    assert sockets.strip() == "[0, 20]"


@pytest.mark.root
def test_paced_sender_offers_its_rate_and_every_frame_is_counted() -> None:
    """Paced at 5000 pps for 1 s, the sender never runs ahead of its rate (by more than one
    batch of 64), and the port counter counts every frame it sent."""
    sender, receiver = programs() or pytest.skip("no C compiler: the C programs are not built")
    with BarePair("p") as pair:
        counter = pair.popen(pair.ns2, receiver, "9000", "1", "eth0", "auto")
        try:
            assert counter.stdout is not None
            assert counter.stdout.readline().startswith("listening ")
            sent = int(pair.ns(pair.ns1, sender, pair.H2_IP, "9000", "22", "1", "eth0",
                               pair.next_hop_mac(), "5000").stdout)
            out, _ = counter.communicate(timeout=30)
        finally:
            stop_process(counter)
    assert 2500 <= sent <= 5000 + 64, sent
    assert json.loads(out)["total"] == sent
