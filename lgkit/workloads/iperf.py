"""iperf3 TCP flows between Mininet hosts, with the JSON report parsed into a result."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from lgkit.core import naming
from lgkit.core.child import stop_process

CONGESTION = ("cubic", "bbr", "dctcp", "reno")
IPERF_PORT = 5201


class WorkloadError(RuntimeError):
    """A workload could not run (the message says why)."""


@dataclass(frozen=True)
class Interval:
    """One report interval of a flow (all parallel streams together)."""

    start_s: float
    end_s: float
    mbps: float
    "Bits the sender sent in the interval per second, in Mb/s."
    retransmits: int


@dataclass(frozen=True)
class TcpResult:
    """What one iperf3 TCP run (one or several parallel streams) achieved."""

    congestion: str
    seconds: float
    goodput_mbps: float
    "Bits received by the server per second, in Mb/s."
    retransmits: int
    "TCP segments the sender retransmitted."
    bytes_received: int
    intervals: tuple[Interval, ...] = ()
    "Each report interval (`interval_s` long)."
    streams: int = 1

    def retransmits_from(self, start_s: float) -> int:
        """Retransmissions in the intervals that begin at or after start_s."""
        return sum(i.retransmits for i in self.intervals if i.start_s >= start_s)


def congestion_status(name: str) -> tuple[bool, str]:
    """Whether the kernel offers this TCP congestion control (one line why not)."""
    available = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    if name in available:
        return True, "available"
    if shutil.which("modprobe"):
        subprocess.run(["modprobe", f"tcp_{name}"], capture_output=True, check=False)
    available = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    if name in available:
        return True, "available"
    return False, f"{name}: unavailable (kernel offers {' '.join(available)})"


def parse_report(report: dict, congestion: str) -> TcpResult:
    """Extract goodput, retransmissions and intervals from iperf3's JSON (client side, -J)."""
    if "error" in report:
        raise WorkloadError(f"iperf3: {report['error']}")
    end = report["end"]
    received = end["sum_received"]
    return TcpResult(
        congestion=congestion,
        seconds=float(received["seconds"]),
        goodput_mbps=float(received["bits_per_second"]) / 1e6,
        retransmits=int(end["sum_sent"].get("retransmits", 0)),
        bytes_received=int(received["bytes"]),
        intervals=tuple(
            Interval(float(i["sum"]["start"]), float(i["sum"]["end"]),
                     float(i["sum"].get("bits_per_second", 0.0)) / 1e6,
                     int(i["sum"].get("retransmits", 0)))
            for i in report.get("intervals", [])
        ),
        streams=len(report.get("start", {}).get("connected", [])) or 1,
    )


def wait_listening(server: subprocess.Popen, port: int = IPERF_PORT, timeout_s: float = 30.0
                   ) -> None:
    """Until the server process's network namespace has a TCP socket listening on `port`
    (/proc/PID/net/tcp and tcp6), however long a busy machine takes to start it."""
    tables = [Path(f"/proc/{server.pid}/net/{name}") for name in ("tcp", "tcp6")]
    local = f":{port:04X}"
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            rows = [line.split() for table in tables for line in table.read_text().splitlines()[1:]]
        except OSError:  # not started yet, or already gone (poll() tells)
            rows = []
        if any(row[1].endswith(local) and row[3] == "0A" for row in rows):  # 0A: LISTEN
            return
        if server.poll() is not None or time.monotonic() > deadline:
            raise WorkloadError(f"iperf3 server did not listen on port {port}")
        time.sleep(0.02)


class IperfServer:
    """iperf3 server in a host, recorded for cleanup."""

    def __init__(self, host, port: int = IPERF_PORT) -> None:
        self.host, self.port = host, port
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> IperfServer:
        self.process = self.host.popen(["iperf3", "-s", "-p", str(self.port)],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        naming.write_pid("iperf3", f"{self.host.name}-{self.port}", self.process.pid)
        wait_listening(self.process, self.port)
        return self

    def __exit__(self, *exc: object) -> None:
        stop_process(self.process, 5.0, naming.pid_file("iperf3", f"{self.host.name}-{self.port}"))


class TcpFlow:
    """A running iperf3 client: start() returns at once, wait() parses its report."""

    def __init__(self, client, server_ip: str, seconds: float, congestion: str = "cubic",
                 port: int = IPERF_PORT, parallel: int = 1, interval_s: float = 1.0) -> None:
        ok, why = congestion_status(congestion)
        if not ok:
            raise WorkloadError(why)
        if parallel < 1:
            raise WorkloadError("parallel flows must be at least 1")
        self.client, self.seconds, self.congestion = client, seconds, congestion
        self.argv = ["iperf3", "-c", server_ip, "-p", str(port), "-t", f"{seconds:g}", "-J",
                     "-C", congestion, "-P", str(parallel), "-i", f"{interval_s:g}"]
        self.process: subprocess.Popen | None = None

    def start(self) -> TcpFlow:
        """Start the client in its host."""
        self.process = self.client.popen(self.argv, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE)
        naming.write_pid("iperf3", f"{self.client.name}-client", self.process.pid)
        return self

    def wait(self) -> TcpResult:
        """Wait for the client to finish and parse its JSON report."""
        assert self.process is not None, "start() first"
        try:
            out, err = self.process.communicate(timeout=self.seconds + 30)
        except subprocess.TimeoutExpired as exc:
            self.process.kill()
            raise WorkloadError("iperf3 client did not finish") from exc
        finally:
            naming.pid_file("iperf3", f"{self.client.name}-client").unlink(missing_ok=True)
        try:
            report = json.loads(out)
        except json.JSONDecodeError as exc:
            raise WorkloadError(f"iperf3 gave no JSON: {err.decode(errors='replace')[:300]}") \
                from exc
        return parse_report(report, self.congestion)


def run_tcp(client, server_ip: str, seconds: float, congestion: str = "cubic",
            port: int = IPERF_PORT, parallel: int = 1, interval_s: float = 1.0) -> TcpResult:
    """Run a TCP flow (or `parallel` streams) from client to an iperf3 server at server_ip."""
    return TcpFlow(client, server_ip, seconds, congestion, port, parallel, interval_s) \
        .start().wait()
