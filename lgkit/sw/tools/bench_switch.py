"""Forwarding benchmark of the built-in switch (and BMv2 when installed) between two namespaced
hosts on veths, plus the virtual-time event rate. Also the host pair used by the switch tests."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tqdm import tqdm

from lgkit.sw.tools.bmv2_stf import free_tcp_port
from lgkit.sw.tools.cli import file_problem
from lgkit.sw.tools.udp_blast import programs

UDP_PORT = 9000
ETH_IP_UDP_HEADERS = 14 + 20 + 8
OFFLOADS = ["rx", "tx", "tso", "gso", "gro", "sg"]

UDP_SENDER = """
import socket, sys, time
dst, port, size, secs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.connect((dst, port))
payload = b"x" * size
sent = 0
end = time.monotonic() + secs
while time.monotonic() < end:
    for _ in range(200):
        try:
            s.send(payload)
            sent += 1
        except OSError:
            pass
print(sent)
"""

UDP_RECEIVER = """
import json, socket, sys, time
port, secs = int(sys.argv[1]), float(sys.argv[2])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
s.bind(("0.0.0.0", port))
print("listening", flush=True)
s.settimeout(secs + 5)
count, first, last = 0, None, None
try:
    s.recv(65535)
    first = last = time.monotonic()
    count = 1
    s.settimeout(1.0)
    while True:
        s.recv(65535)
        last = time.monotonic()
        count += 1
except (TimeoutError, socket.timeout):
    pass
print(json.dumps({"count": count, "seconds": (last - first) if first else 0.0}))
"""


def _run(*cmd: str, check: bool = True,
         timeout: float | None = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, check=check, capture_output=True, text=True, timeout=timeout)


class HostPair:
    """Two hosts in their own network namespaces, each on a veth whose other end (port 1 and
    port 2 of the switch) stays in the root namespace. h1 = 10.0.1.1, h2 = 10.0.2.2, with a
    gateway whose MAC is pinned by a static ARP entry (the P4 router does not answer ARP).
    Deleting the namespaces removes the veths; `close` does it, also after errors."""

    H1_MAC, H2_MAC = "00:00:00:00:01:01", "00:00:00:00:02:02"
    GW1_MAC, GW2_MAC = "00:00:00:00:01:fe", "00:00:00:00:02:fe"
    H1_IP, H2_IP = "10.0.1.1", "10.0.2.2"

    def __init__(self, tag: str | None = None) -> None:
        tag = tag or f"{os.getpid() % 100000}"
        self.ns1, self.ns2 = f"lgk{tag}h1", f"lgk{tag}h2"
        self.sw1, self.sw2 = f"lgk{tag}s1", f"lgk{tag}s2"
        self._created = False

    def __enter__(self) -> HostPair:
        try:
            self.create()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def create(self) -> None:
        self._created = True
        for ns, sw, mac, ip, gw, gw_mac in (
                (self.ns1, self.sw1, self.H1_MAC, self.H1_IP, "10.0.1.254", self.GW1_MAC),
                (self.ns2, self.sw2, self.H2_MAC, self.H2_IP, "10.0.2.254", self.GW2_MAC)):
            _run("ip", "netns", "add", ns)
            self.ns(ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", check=False)
            self.ns(ns, "sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1", check=False)
            _run("ip", "link", "add", sw, "type", "veth", "peer", "name", "eth0", "netns", ns)
            _run("sysctl", "-qw", f"net.ipv6.conf.{sw}.disable_ipv6=1", check=False)
            self.ns(ns, "ip", "link", "set", "lo", "up")
            self.ns(ns, "ip", "link", "set", "eth0", "address", mac)
            self.ns(ns, "ip", "addr", "add", f"{ip}/24", "dev", "eth0")
            self.ns(ns, "ip", "link", "set", "eth0", "up")
            self.ns(ns, "ip", "route", "add", "default", "via", gw)
            self.ns(ns, "ip", "neigh", "add", gw, "lladdr", gw_mac, "dev", "eth0")
            _run("ip", "link", "set", sw, "up")
            if shutil.which("ethtool"):
                for dev, prefix in ((sw, ()), ("eth0", ("ip", "netns", "exec", ns))):
                    subprocess.run([*prefix, "ethtool", "-K", dev, *[x for o in OFFLOADS
                                                                  for x in (o, "off")]],
                                   capture_output=True, check=False)

    def ns(self, ns: str, *cmd: str, check: bool = True,
           timeout: float | None = 60) -> subprocess.CompletedProcess[str]:
        return _run("ip", "netns", "exec", ns, *cmd, check=check, timeout=timeout)

    def popen(self, ns: str, *cmd: str) -> subprocess.Popen[str]:
        return subprocess.Popen(["ip", "netns", "exec", ns, *cmd], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def entries(self) -> list[str]:
        """switch-cli / simple_switch_CLI commands that route h1 <-> h2 with p4/basic.p4."""
        return [f"table_add MyIngress.ipv4_lpm MyIngress.ipv4_forward {self.H1_IP}/32 => "
                f"{self.H1_MAC} 1",
                f"table_add MyIngress.ipv4_lpm MyIngress.ipv4_forward {self.H2_IP}/32 => "
                f"{self.H2_MAC} 2"]

    def next_hop_mac(self) -> str:
        """The MAC h1 sends h2's frames to (the gateway's, pinned)."""
        return self.GW1_MAC

    def close(self) -> None:
        if not self._created:
            return
        for ns in (self.ns1, self.ns2):
            _run("ip", "netns", "del", ns, check=False)
        for sw in (self.sw1, self.sw2):
            _run("ip", "link", "del", sw, check=False)
        self._created = False


class BarePair(HostPair):
    """The reference: two namespaced hosts on one veth pair, no switch between them."""

    H1_IP, H2_IP = "10.0.9.1", "10.0.9.2"

    def __init__(self, tag: str | None = None) -> None:
        super().__init__(f"v{tag or os.getpid() % 100000}")

    def create(self) -> None:
        self._created = True
        _run("ip", "netns", "add", self.ns1)
        _run("ip", "netns", "add", self.ns2)
        _run("ip", "link", "add", "eth0", "netns", self.ns1, "type", "veth", "peer", "name",
             "eth0", "netns", self.ns2)
        for ns, ip in ((self.ns1, self.H1_IP), (self.ns2, self.H2_IP)):
            self.ns(ns, "ip", "addr", "add", f"{ip}/24", "dev", "eth0")
            self.ns(ns, "ip", "link", "set", "eth0", "up")
            self.ns(ns, "ip", "link", "set", "lo", "up")
            if shutil.which("ethtool"):
                self.ns(ns, "ethtool", "-K", "eth0", *[x for o in OFFLOADS for x in (o, "off")],
                        check=False)

    def next_hop_mac(self) -> str:
        """h2's own MAC: h1 sends to it directly."""
        return self.ns(self.ns2, "cat", "/sys/class/net/eth0/address").stdout.strip()


def start_switch(cmd: list[str], timeout_s: float = 60.0) -> subprocess.Popen[str]:
    """Start a switch process and wait for its "ready" line; RuntimeError if it fails."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + timeout_s
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if "ready" in line:
            return proc
        if not line and proc.poll() is not None:
            err = proc.stderr.read() if proc.stderr else ""
            raise RuntimeError(f"switch exited with {proc.returncode}: {err.strip()}")
    stop_process(proc)
    raise RuntimeError("switch did not become ready")


def stop_process(proc: subprocess.Popen[str], timeout_s: float = 5.0) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def udp_rate(pair: HostPair, frame_bytes: int, seconds: float, at_port: bool = False,
             offered_pps: float | None = None, hook: str = "auto") -> tuple[float, float]:
    """(received packets/s at h2, sent packets/s at h1) of UDP frames of `frame_bytes`, sent
    flat out or paced at `offered_pps`: counted by h2's UDP socket, or `at_port` at h2's port
    through `hook` (PORT_HOOKS, receivers()). Counting at the port and pacing need the C
    programs."""
    size = frame_bytes - ETH_IP_UDP_HEADERS
    native = programs()  # C, batched: a Python sender is slower than a native switch
    if (at_port or offered_pps) and not native:
        raise RuntimeError("counting at h2's port and pacing need the C sender and receiver "
                           "(no C compiler)")
    send = [native[0]] if native else [sys.executable, "-c", UDP_SENDER]
    raw = ["eth0", pair.next_hop_mac()] if native else []  # the C sender's transmit ring
    raw += [f"{offered_pps:g}"] if offered_pps else []
    receive = [native[1]] if native else [sys.executable, "-c", UDP_RECEIVER]
    receiver = pair.popen(pair.ns2, *receive, str(UDP_PORT), str(seconds),
                          *(["eth0", hook] if at_port else []))
    try:
        assert receiver.stdout is not None and receiver.stderr is not None
        if not receiver.stdout.readline().startswith("listening"):
            raise RuntimeError(f"the UDP receiver failed: {receiver.stderr.read().strip()}")
        sender = pair.ns(pair.ns1, *send, pair.H2_IP, str(UDP_PORT), str(size), str(seconds),
                         *raw, timeout=seconds + 15)
        out, err = receiver.communicate(timeout=seconds + 15)
    except subprocess.TimeoutExpired:
        raise RuntimeError("the UDP sender or receiver did not finish") from None
    finally:
        stop_process(receiver)
    if not out.strip():
        raise RuntimeError(f"the UDP receiver failed: {err.strip()}")
    result = json.loads(out.strip().splitlines()[-1])
    received = result["count"] / result["seconds"] if result["seconds"] else 0.0
    return received, int(sender.stdout.strip()) / seconds


def tcp_rate(pair: HostPair, seconds: float) -> float | None:
    """iperf3 TCP goodput h1 -> h2 in Mb/s (None without iperf3)."""
    if not shutil.which("iperf3"):
        return None
    server = pair.popen(pair.ns2, "iperf3", "-s", "-1")
    try:
        time.sleep(0.5)
        client = pair.ns(pair.ns1, "iperf3", "-c", pair.H2_IP, "-t", str(max(1, int(seconds))),
                         "-J", "--connect-timeout", "3000", check=False, timeout=seconds + 15)
        report = json.loads(client.stdout or "{}")
    except subprocess.TimeoutExpired:
        raise RuntimeError("iperf3 did not finish") from None
    finally:
        stop_process(server)
    if "error" in report or "end" not in report:
        return 0.0
    return report["end"]["sum_received"]["bits_per_second"] / 1e6


Results = dict[str, list[float | None]]  # each measure -> one value per repetition

UDP_RUNS = (("udp1400", 1400, True), ("udp64", 64, True), ("udp64sock", 64, False))
"""The UDP runs of a measure(): (key, frame bytes, counted at h2's port, else by its socket)."""

PORT_HOOKS = {"tcx": "its interface's tc ingress, a tcx link",
              "xdp": "its interface's generic (skb-mode) XDP hook"}
"""Where the port counter's BPF program counts and drops the bench's datagrams; "auto": tcx,
else generic XDP."""


def receivers(hook: str) -> str:
    """The header line saying what the receiver counts, with the port counter's `hook`."""
    return (f"UDP received: counted at h2's port ({PORT_HOOKS[hook]}: a BPF program counts "
            "the bench's datagrams and drops them before h2's IP stack, as a hardware tester "
            "counts at its port), the same for every row; 'by h2's UDP socket': a C "
            "receiver's recvmmsg batches, whose IP/UDP receive a veth runs in the sending "
            "process's system call (the switch's, or the bare pair's sender's)")


def port_hook(pair: HostPair, hook: str) -> str:
    """The hook ("tcx" or "xdp") the port counter attaches to at h2's port given `hook`
    ("auto", "tcx" or "xdp"), tried by attaching it once; RuntimeError naming what is missing
    if none attaches."""
    native = programs()
    if not native:
        raise RuntimeError("counting at h2's port needs the C receiver (no C compiler)")
    counter = pair.popen(pair.ns2, native[1], str(UDP_PORT), "1", "eth0", hook)
    try:
        assert counter.stdout is not None and counter.stderr is not None
        line = counter.stdout.readline().split()
    finally:
        stop_process(counter)
    if line[:1] != ["listening"] or len(line) != 2:
        raise RuntimeError(counter.stderr.read().strip() or "the port counter failed")
    return line[1]


def measure(pair: HostPair, seconds: float, switch: subprocess.Popen[str] | None,
            repeat: int = 1, offered_pps: float | None = None, hook: str = "auto") -> Results:
    """TCP and UDP rates through a running switch process (None: the bare pair), `repeat`
    times each, UDP sent flat out or paced at `offered_pps`, counted at h2's port through
    `hook` (RuntimeError if the switch dies)."""

    def check_alive() -> None:
        if switch is not None and switch.poll() is not None:
            raise RuntimeError(f"the switch exited with status {switch.returncode}")

    results: Results = {"tcp_mbps": []}
    for _ in range(repeat):
        results["tcp_mbps"].append(tcp_rate(pair, seconds))
        check_alive()
        for key, size, at_port in UDP_RUNS:
            before = _switch_work(pair, switch)
            received, sent = udp_rate(pair, size, seconds, at_port, offered_pps, hook)
            check_alive()
            after = _switch_work(pair, switch)
            frames = after[1] - before[1] if after and before else 0
            results.setdefault(f"{key}_rx_pps", []).append(received)
            results.setdefault(f"{key}_tx_pps", []).append(sent)
            if size == 64:
                results.setdefault(f"{key}_cpu_us", []).append(
                    (after[0] - before[0]) / frames * 1e6 if after and before and frames > 0
                    else None)
    return results


def _switch_work(pair: HostPair, switch: subprocess.Popen[str] | None
                 ) -> tuple[float, int] | None:
    """(the switch's CPU seconds, frames it sent towards h2) so far; None for no switch."""
    if switch is None:
        return None
    cpu = cpu_seconds(switch.pid)
    try:
        sent = int(Path(f"/sys/class/net/{pair.sw2}/statistics/tx_packets").read_text())
    except (OSError, ValueError):
        return None
    return None if cpu is None else (cpu, sent)


def cpu_seconds(pid: int) -> float | None:
    """User and system CPU time of a process and its threads so far (None if it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class BuiltinUnderTest:
    """`lgkit switch` on the pair's ports, routes set with `lgkit switch-cli`."""

    def __init__(self, program: str, engine: str = "native", named: bool = False) -> None:
        self.program = program
        self.engine = engine
        self.name = f"built-in ({engine})" if named or engine != "native" else "built-in"
        self.addr = ""

    def start(self, pair: HostPair) -> subprocess.Popen[str]:
        self.addr = f"127.0.0.1:{free_tcp_port()}"
        switch = start_switch([sys.executable, "-m", "lgkit.cli", "switch", "-i",
                               f"1@{pair.sw1}", "-i", f"2@{pair.sw2}", "--grpc-server-addr",
                               self.addr, "--engine", self.engine, self.program])
        try:
            self.cli(pair.entries())
        except BaseException:
            stop_process(switch)
            raise
        return switch

    def cli(self, commands: list[str]) -> str:
        return _run(sys.executable, "-m", "lgkit.cli", "switch-cli", "--grpc-server-addr",
                    self.addr, *[x for cmd in commands for x in ("-c", cmd)]).stdout

    def note(self) -> str:
        drops = self.cli(["show_drops"])
        return "drop counters: " + ", ".join(drops.split("\n")).strip(", ")


class Bmv2UnderTest:
    """BMv2 (simple_switch_grpc, else simple_switch) with p4c-bm2-ss's JSON of the same
    program, routes set with simple_switch_CLI."""

    name = "BMv2"
    TOOLS = ("p4c-bm2-ss", "simple_switch_CLI")

    def __init__(self, program: str, work: str) -> None:
        self.binary = shutil.which("simple_switch_grpc") or shutil.which("simple_switch")
        self.work = Path(work)
        self.json = str(self.work / "program.json")
        self.program = program
        self.thrift = ""

    def missing(self) -> list[str]:
        missing = [t for t in self.TOOLS if not shutil.which(t)]
        return missing + ([] if self.binary else ["simple_switch_grpc"])

    def command(self, pair: HostPair) -> list[str]:
        """Its own Thrift port and notifications socket (other BMv2s may run on the machine),
        its gRPC server (simple_switch_grpc) on localhost only, and its log level off: at its
        default (trace) BMv2 formats every log line even with no sink (docs/bmv2.md)."""
        self.thrift = str(free_tcp_port())
        cmd = [str(self.binary), "-i", f"1@{pair.sw1}", "-i", f"2@{pair.sw2}",
               "--thrift-port", self.thrift, "--log-level", "off",
               "--notifications-addr", f"ipc://{self.work.resolve()}/notifications.ipc",
               self.json]
        if Path(str(self.binary)).name == "simple_switch_grpc":
            cmd += ["--", "--grpc-server-addr", f"127.0.0.1:{free_tcp_port()}"]
        return cmd

    def start(self, pair: HostPair) -> subprocess.Popen[str]:
        if not Path(self.json).exists():
            _run("p4c-bm2-ss", "-o", self.json, self.program, timeout=300)
        switch = subprocess.Popen(self.command(pair), stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, text=True)
        try:
            deadline = time.monotonic() + 30
            while True:
                done = subprocess.run(["simple_switch_CLI", "--thrift-port", self.thrift],
                                      input="\n".join(pair.entries()) + "\n", text=True,
                                      capture_output=True, check=False)
                if done.returncode == 0 and "Could not connect" not in done.stdout:
                    return switch
                if switch.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"BMv2 did not start: {done.stdout[-300:]}")
                time.sleep(0.5)
        except BaseException:
            stop_process(switch)
            raise

    def note(self) -> str:
        return Path(str(self.binary)).name


BARE = "veth pair (no switch)"


def bench_side_by_side(switches: list[BuiltinUnderTest | Bmv2UnderTest], seconds: float,
                       repeat: int, offered_pps: float | None = None,
                       hook: str = "auto") -> dict[str, Results]:
    """Every switch on the same host pair, alternating: switch A, switch B, A, B, ... (one
    measure() each), so both see the same machine load; after each round, the same traffic
    between two hosts on one veth pair (BARE, the reference no switch can beat). The port
    counter's hook, resolved from `hook` once, is said first and used by every row."""
    results: dict[str, Results] = {}
    with HostPair() as pair:
        hook = port_hook(pair, hook)
        print(receivers(hook), flush=True)
        for _ in tqdm(range(repeat), desc="runs", unit="round", leave=False):
            for sut in switches:
                switch = sut.start(pair)
                try:
                    one = measure(pair, seconds, switch, offered_pps=offered_pps, hook=hook)
                    note = sut.note()
                finally:
                    stop_process(switch)
                merged = results.setdefault(sut.name, {k: [] for k in one})
                for key, values in one.items():
                    merged[key] += values
                tqdm.write(f"  {sut.name}: {_summary(one)}; {note}")
            with BarePair() as bare:
                one = measure(bare, seconds, None, offered_pps=offered_pps, hook=hook)
            merged = results.setdefault(BARE, {k: [] for k in one})
            for key, values in one.items():
                merged[key] += values
            tqdm.write(f"  {BARE}: {_summary(one)}")
    return results


def bench_virtual_time(program: str, seconds: float, pps: float) -> dict[str, float]:
    """Two hosts and two switches running `program` over 100G links in virtual time, h1 sending
    1400 B frames at `pps`, for `seconds` of wall time."""
    from lgkit.sw.switch.loader import load_program
    from lgkit.sw.switch.vnet import VirtualNetwork

    net = VirtualNetwork(seed=1)
    pipelines = [load_program(program) for _ in (1, 2)]
    switches = [net.add_switch(f"s{i}", pipeline, pass_latency_ns=500)
                for i, pipeline in zip((1, 2), pipelines, strict=True)]
    h1, h2 = net.add_host("h1"), net.add_host("h2")
    net.link(h1, switches[0], port=1, rate_bps=100e9, delay_ns=100)
    net.link(switches[0], switches[1], port_a=2, port_b=1, rate_bps=100e9, delay_ns=1000)
    net.link(switches[1], h2, port=2, rate_bps=100e9, delay_ns=100)
    for pipeline in pipelines:
        pipeline.tables["MyIngress.ipv4_lpm"].insert(_route(HostPair.H2_IP, 2))
    frame = _udp_frame(1400)
    h1.send_at_rate(iter(lambda: frame, None), pps=pps)
    step_ns = max(1000, int(1e9 / pps) * 10)
    wall0 = time.perf_counter()
    while time.perf_counter() - wall0 < seconds:
        net.run(until_ns=net.now_ns + step_ns)
    wall = time.perf_counter() - wall0
    return {"events_per_s": net.events_run / wall, "packets_per_s": len(h2.received) / wall,
            "virtual_over_wall": net.now_ns / 1e9 / wall}


def _route(ip: str, port: int):  # noqa: ANN202 - a pipeline TableEntry
    from ipaddress import IPv4Address

    from lgkit.sw.exec.interp.tables import Lpm, TableEntry

    mac = int(HostPair.H2_MAC.replace(":", ""), 16)
    return TableEntry([Lpm(int(IPv4Address(ip)), 32)], "MyIngress.ipv4_forward", [mac, port])


def _udp_frame(frame_bytes: int) -> bytes:
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether

    pkt = (Ether(dst=HostPair.GW1_MAC, src=HostPair.H1_MAC) /
           IP(src=HostPair.H1_IP, dst=HostPair.H2_IP) / UDP(sport=1234, dport=UDP_PORT))
    return bytes(pkt / (b"x" * (frame_bytes - len(pkt))))


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


MEASURES = (("tcp_mbps", "TCP Mb/s"),
            ("udp1400_rx_pps", "UDP 1400 B pps received at h2's port"),
            ("udp64_rx_pps", "UDP 64 B pps received at h2's port"),
            ("udp64sock_rx_pps", "UDP 64 B pps received by h2's UDP socket"),
            ("udp1400_tx_pps", "UDP 1400 B pps sent"), ("udp64_tx_pps", "UDP 64 B pps sent"),
            ("udp64sock_tx_pps", "UDP 64 B pps sent (socket-counted run)"),
            ("udp64_cpu_us", "switch CPU us per 64 B frame forwarded"),
            ("udp64sock_cpu_us", "switch CPU us per 64 B frame (socket-counted run)"))
"""The CPU rows: the switch process's CPU time over a 64 B run per frame it sent towards h2
(the kernel's count on its port; its threads and the kernel work done in its system calls,
which through a veth include h2's receive); it depends less on the machine's load than a rate
does: 1e6 / it is about the frames a core of its own would forward."""


def _known(values: list[float | None]) -> list[float]:
    return sorted(v for v in values if v is not None)


def _fmt(values: list[float | None]) -> str:
    """min / median / max (or the one value); small values with a decimal."""
    known = _known(values)
    if not known:
        return "n/a"
    form = "{:,.2f}" if known[-1] < 100 else "{:,.0f}"
    if len(known) == 1:
        return form.format(known[0])
    return " / ".join(form.format(v) for v in (known[0], statistics.median(known), known[-1]))


def _summary(r: Results) -> str:
    return "; ".join(f"{label} {_fmt(r[key])}" for key, label in MEASURES[:4])


def side_by_side_table(results: dict[str, Results]) -> str:
    """One row per measure: each switch's min / median / max, and the ratio of the medians of
    the first to each other (built-in / BMv2, built-in / the bare veth pair)."""
    names = list(results)
    head = ["measure", *[f"{n} min / median / max" for n in names]]
    head += [f"{names[0]} / {n} (medians)" for n in names[1:]]
    rows = [head]
    for key, label in MEASURES:
        row = [label, *[_fmt(results[n].get(key, [])) for n in names]]
        a = _known(results[names[0]].get(key, []))
        for n in names[1:]:
            b = _known(results[n].get(key, []))
            ratio = statistics.median(a) / statistics.median(b) if a and b and \
                statistics.median(b) else None
            row.append(f"{ratio:.2f}x" if ratio is not None else "n/a")
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
                     for r in rows)


def _load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def run_benchmark(program: str, seconds: float, repeat: int = 1, engine: str = "native",
                  offered_pps: float | None = None, hook: str = "auto") -> int:
    """The built-in switch on `engine` beside BMv2 (when installed), or with engine "both" on
    the python engine beside the native one; UDP sent flat out or paced at `offered_pps`,
    counted at h2's port through `hook` (auto, tcx or xdp)."""
    if os.geteuid() != 0:
        print("lgkit bench-switch: needs root (network namespaces)", file=sys.stderr)
        return 1
    if not os.path.exists(program):
        print(f"lgkit bench-switch: no such program: {program}", file=sys.stderr)
        return 1
    signal.signal(signal.SIGTERM, _interrupt)  # clean up on SIGTERM as on Ctrl-C
    try:
        with tempfile.TemporaryDirectory() as tmp:
            switches: list[BuiltinUnderTest | Bmv2UnderTest] = [
                BuiltinUnderTest(program, e, named=engine == "both") for e in
                (("python", "native") if engine == "both" else (engine,))]
            bmv2 = Bmv2UnderTest(program, tmp)
            if engine == "both":
                pass  # the two engines side by side, with their ratio
            elif bmv2.missing():
                print(f"BMv2: not installed ({', '.join(bmv2.missing())} missing): "
                      "the built-in switch alone")
            else:
                switches.append(bmv2)
            when = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
            print(f"{when} UTC, {os.cpu_count()} cores, {_load()}; {Path(program).name}; "
                  f"{seconds:g} s runs, {repeat} round(s) of "
                  f"{' then '.join(s.name for s in switches)} on the same two hosts, then "
                  f"the {BARE}")
            print("UDP offered: " + (f"{offered_pps:,.0f} pps, paced" if offered_pps else
                                     "flat out, as fast as the sender sends"))
            results = bench_side_by_side(switches, seconds, repeat, offered_pps, hook)
        print(side_by_side_table(results))
        for pps in (8e6, 1e4):
            v = bench_virtual_time(program, seconds, pps)
            print(f"virtual time, 2 switches, {pps:,.0f} pps offered: "
                  f"{v['events_per_s']:,.0f} events/s, {v['packets_per_s']:,.0f} packets/s "
                  f"delivered, {v['virtual_over_wall']:.3g} virtual s per wall s")
        print(f"at the end: {_load()}")
    except (RuntimeError, subprocess.CalledProcessError) as exc:
        detail = getattr(exc, "stderr", "") or ""
        print(f"lgkit bench-switch: failed: {exc} {detail}".strip(), file=sys.stderr)
        return 1
    return 0


def register(subparsers: Any) -> None:
    bench = subparsers.add_parser(
        "bench-switch", help="forwarding benchmark: built-in switch vs BMv2 between two hosts",
        description="Create two namespaced hosts on veths and forward between them through "
                    "`lgkit switch` and, when installed, BMv2 (simple_switch_grpc) running the "
                    "same program (p4/basic.p4), in alternating runs; print TCP Mb/s and UDP "
                    "packets/s at 1400 B and 64 B counted at h2's port (a BPF counter on its "
                    "tc ingress, Linux 6.6 or later, else generic XDP, Linux 5.9 or later), "
                    "and 64 B counted by h2's UDP socket, side "
                    "by side (min / median / max and the ratio of the medians), and "
                    "virtual-time events/s.")
    bench.add_argument("--program", default=None,
                       help="the basic IPv4 program (default: p4/basic.p4 of this checkout)")
    bench.add_argument("--seconds", type=float, default=5.0, help="length of each run")
    bench.add_argument("--repeat", type=int, default=3,
                       help="rounds: each switch is measured N times, alternating (3)")
    bench.add_argument("--quick", action="store_true", help="1 s runs, for a smoke test")
    bench.add_argument("--offered-pps", type=float, default=None,
                       help="send the UDP frames at this steady rate (1000..10000000 packets/s) "
                            "instead of flat out, the same for every row")
    bench.add_argument("--engine", choices=["python", "native", "both"], default="native",
                       help="the built-in switch's engine (beside BMv2; native, the switch's "
                            "default), or both engines side by side")
    bench.add_argument("--port-hook", choices=["auto", "tcx", "xdp"], default="auto",
                       help="where h2's port counter counts and drops the UDP rows' datagrams: "
                            "tcx (tc ingress, Linux 6.6 or later), xdp (generic XDP, Linux 5.9 "
                            "or later), or auto: tcx, else xdp (auto)")
    bench.set_defaults(func=_run_bench)


def _run_bench(args: argparse.Namespace) -> int:
    if not 1 <= args.repeat <= 100:
        print("lgkit bench-switch: --repeat must be in 1..100", file=sys.stderr)
        return 2
    if not 0.5 <= args.seconds <= 3600:
        print("lgkit: error: --seconds must be in 0.5..3600", file=sys.stderr)
        return 2
    if args.offered_pps is not None and not 1e3 <= args.offered_pps <= 1e7:
        print("lgkit: error: --offered-pps must be in 1000..10000000", file=sys.stderr)
        return 2
    program = program_or_error(args.program)
    if program is None:
        return 1
    return run_benchmark(program, 1.0 if args.quick else args.seconds, args.repeat, args.engine,
                         args.offered_pps, args.port_hook)


def program_or_error(program: str | None) -> str | None:
    """The program a benchmark runs (default: p4/basic.p4), or None after a one-line error."""
    if program is None:
        return str(Path(__file__).resolve().parents[3] / "p4" / "basic.p4")
    problem = file_problem(program)
    if problem:
        print(f"lgkit: error: --program {program}: {problem}", file=sys.stderr)
        return None
    return program
