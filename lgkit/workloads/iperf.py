"""iperf3 TCP flows between Mininet hosts, with the JSON report parsed into a result."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from lgkit.net.lifecycle import naming

CONGESTION = ("cubic", "bbr", "dctcp", "reno")
IPERF_PORT = 5201


class WorkloadError(RuntimeError):
    """A workload could not run (the message says why)."""


@dataclass(frozen=True)
class TcpResult:
    """What one iperf3 TCP flow achieved."""

    congestion: str
    seconds: float
    goodput_mbps: float
    "Bits received by the server per second, in Mb/s."
    retransmits: int
    "TCP segments the sender retransmitted."
    bytes_received: int
    intervals: tuple[tuple[float, float, int], ...] = ()
    "(start s, end s, retransmissions) of each report interval (1 s)."

    def retransmits_from(self, start_s: float) -> int:
        """Retransmissions in the intervals that begin at or after start_s."""
        return sum(retx for begin, _, retx in self.intervals if begin >= start_s)


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
    """Extract goodput and retransmissions from iperf3's JSON (client side, -J)."""
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
            (float(i["sum"]["start"]), float(i["sum"]["end"]), int(i["sum"].get("retransmits", 0)))
            for i in report.get("intervals", [])
        ),
    )


class IperfServer:
    """iperf3 server in a host, recorded for cleanup."""

    def __init__(self, host, port: int = IPERF_PORT) -> None:
        self.host, self.port = host, port
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> IperfServer:
        self.process = self.host.popen(["iperf3", "-s", "-p", str(self.port)],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        naming.write_pid("iperf3", f"{self.host.name}-{self.port}", self.process.pid)
        time.sleep(0.3)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(5)
        naming.pid_file("iperf3", f"{self.host.name}-{self.port}").unlink(missing_ok=True)


def run_tcp(client, server_ip: str, seconds: float, congestion: str = "cubic",
            port: int = IPERF_PORT) -> TcpResult:
    """Run one TCP flow from client to an iperf3 server at server_ip; parse its JSON report."""
    ok, why = congestion_status(congestion)
    if not ok:
        raise WorkloadError(why)
    argv = ["iperf3", "-c", server_ip, "-p", str(port), "-t", f"{seconds:g}", "-J",
            "-C", congestion]
    proc = client.popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    naming.write_pid("iperf3", f"{client.name}-client", proc.pid)
    try:
        out, err = proc.communicate(timeout=seconds + 30)
    except subprocess.TimeoutExpired as exc:
        proc.kill()
        raise WorkloadError("iperf3 client did not finish") from exc
    finally:
        naming.pid_file("iperf3", f"{client.name}-client").unlink(missing_ok=True)
    try:
        report = json.loads(out)
    except json.JSONDecodeError as exc:
        raise WorkloadError(f"iperf3 gave no JSON: {err.decode(errors='replace')[:300]}") \
            from exc
    return parse_report(report, congestion)
