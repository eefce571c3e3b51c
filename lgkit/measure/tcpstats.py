"""TCP statistics of a host: per-connection `ss -tin` samples and `nstat` counters (deltas)."""

from __future__ import annotations

import re
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

from lgkit.measure.results import RunStore

SS_NUMBERS = ("rto", "cwnd", "ssthresh", "mss", "bytes_sent", "bytes_retrans", "bytes_acked",
              "segs_out", "segs_in", "data_segs_out", "lost", "sacked", "reordering",
              "minrtt", "unacked", "notsent")
"ss -i fields kept as numbers (ms for times, bytes, segments)."
NSTAT_KEYS = ("TcpOutSegs", "TcpRetransSegs", "TcpExtTCPTimeouts", "TcpExtTCPLossProbes",
              "TcpExtTCPLossProbeRecovery", "TcpExtTCPFastRetrans", "TcpExtTCPSackRecovery",
              "TcpExtTCPSpuriousRTOs", "TcpExtTCPDSACKRecv", "TcpExtTCPOFOQueue",
              "TcpExtTCPDSACKOfoRecv", "TcpExtTCPSACKReorder", "TcpExtTCPRenoReorder",
              "IpExtInCEPkts", "TcpExtTCPDeliveredCE", "TcpExtTCPSynRetrans")
"The nstat counters a run keeps (a missing one is 0)."
_RATE = re.compile(r"\b(send|pacing_rate|delivery_rate) ([\d.]+)([KMG]?)bps")
_SCALE = {"": 1e-6, "K": 1e-3, "M": 1.0, "G": 1e3}


def parse_ss(text: str) -> list[dict[str, Any]]:
    """One record per TCP connection of `ss -tin` output: local, peer, congestion control,
    rtt/rttvar (ms), retransmissions (now, total), rates (Mb/s) and the SS_NUMBERS fields."""
    records: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for line in text.splitlines():
        if not line.strip() or line.startswith("State"):
            continue
        if not line[0].isspace():
            parts = line.split()
            if len(parts) >= 5:
                current = {"state": parts[0], "local": parts[3], "peer": parts[4]}
                records.append(current)
            continue
        if current is None:
            continue
        tokens = line.split()
        if tokens and ":" not in tokens[0]:
            current["cc"] = tokens[0]
        for token in tokens:
            key, sep, value = token.partition(":")
            if not sep:
                continue
            if key == "rtt" and "/" in value:
                rtt, var = value.split("/", 1)
                current["rtt_ms"], current["rttvar_ms"] = float(rtt), float(var)
            elif key == "retrans" and "/" in value:
                now, total = value.split("/", 1)
                current["retrans_now"], current["retrans_total"] = int(now), int(total)
            elif key in SS_NUMBERS:
                try:
                    current[key] = float(value)
                except ValueError:
                    pass
        for name, number, unit in _RATE.findall(line):
            current[f"{name}_mbps"] = float(number) * _SCALE[unit]
    return records


def parse_nstat(text: str) -> dict[str, int]:
    """Counter name -> value of `nstat -asz` output."""
    counters: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and not line.startswith("#") and parts[1].isdigit():
            counters[parts[0]] = int(parts[1])
    return counters


def nstat_delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    """The kept counters' increase between two readings."""
    return {key: after.get(key, 0) - before.get(key, 0) for key in NSTAT_KEYS}


Runner = Callable[[list[str]], str]
"Runs a command in a host's namespace and returns its output."


def host_runner(host: Any) -> Runner:
    """A Runner for a Mininet host that is safe to call from a thread (one process per call,
    not the host's shell)."""

    def run(argv: list[str]) -> str:
        proc = host.popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        out, _ = proc.communicate(timeout=10)
        return out.decode(errors="replace")

    return run


def nstat(run: Runner) -> dict[str, int]:
    """A host's absolute TCP/IP counters (nstat -asz: no history file is read or written)."""
    return parse_nstat(run(["nstat", "-asz"]))


class SsSampler:
    """Appends every TCP connection of a host (`ss -tin`) to a table at an interval."""

    def __init__(self, store: RunStore, table: str, run: Runner, labels: dict[str, Any],
                 interval_s: float = 0.5, peer_port: int | None = None) -> None:
        self.store, self.table, self.run, self.labels = store, table, run, labels
        self.interval_s, self.peer_port = interval_s, peer_port
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="ss-sampler")
        self._t0 = time.monotonic()

    def _sample(self) -> None:
        t = round(time.monotonic() - self._t0, 3)
        for record in parse_ss(self.run(["ss", "-tin"])):
            if self.peer_port is not None and not record["peer"].endswith(f":{self.peer_port}"):
                continue
            row = {**self.labels, "t_s": t, **{k: record.get(k, "") for k in SS_COLUMNS}}
            self.store.append(self.table, row)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._sample()

    def __enter__(self) -> SsSampler:
        self._t0 = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(self.interval_s + 10)


SS_COLUMNS = ("local", "peer", "cc", "rtt_ms", "rttvar_ms", "retrans_now", "retrans_total",
              *SS_NUMBERS, "send_mbps", "delivery_rate_mbps")
"Columns of an ss sample row (after the labels and t_s)."
