"""UDP stress: a paced sender with per-packet sequence numbers, and a receiver that accounts for
loss, duplicates and reordering (runs in hosts).

Every datagram starts with its sequence number and its send time (u64 each, big endian,
CLOCK_MONOTONIC ns, which every network namespace of one machine shares), so the receiver also
measures one-way delay.

    python -m lgkit.workloads.udpstress recv --port 5400 --seconds 12
    python -m lgkit.workloads.udpstress send --dest 10.0.0.3 --port 5400 --mbps 9 --seconds 10

Each side prints one JSON line: the sender what it sent, the receiver its UdpAccount report.
"""

from __future__ import annotations

import argparse
import json
import socket
import struct
import sys
import time
from dataclasses import dataclass, field

STAMP = struct.Struct("!QQ")
"sequence number, send time (ns)"
MIN_PAYLOAD = STAMP.size
UDP_IP_OVERHEAD = 28
"IPv4 + UDP header bytes per datagram."


@dataclass
class UdpAccount:
    """Receiver-side accounting of a numbered datagram stream."""

    received: int = 0
    duplicates: int = 0
    reordered: int = 0
    "Datagrams that arrived after one with a higher sequence number (first copies only)."
    highest: int = -1
    payload_bytes: int = 0
    "Bytes of first copies (goodput)."
    first_ns: int = 0
    last_ns: int = 0
    delays_us: list[float] = field(default_factory=list)
    "One-way delay of each first copy."
    _seen: bytearray = field(default_factory=bytearray, repr=False)

    def add(self, seq: int, sent_ns: int, size: int, now_ns: int) -> None:
        """Account for one datagram that arrived at now_ns."""
        self.received += 1
        if seq >= len(self._seen) * 8:
            self._seen.extend(bytes(max(len(self._seen), seq // 8 + 1 - len(self._seen))))
        byte, bit = divmod(seq, 8)
        if self._seen[byte] >> bit & 1:
            self.duplicates += 1
            return
        self._seen[byte] |= 1 << bit
        if seq < self.highest:
            self.reordered += 1
        self.highest = max(self.highest, seq)
        self.payload_bytes += size
        self.first_ns = self.first_ns or now_ns
        self.last_ns = now_ns
        self.delays_us.append((now_ns - sent_ns) / 1e3)

    @property
    def unique(self) -> int:
        """Distinct sequence numbers received."""
        return self.received - self.duplicates

    def lost(self, sent: int | None = None) -> int:
        """Sequence numbers never received, out of `sent` (default: up to the highest seen)."""
        total = self.highest + 1 if sent is None else sent
        return max(0, total - self.unique)

    def report(self, sent: int | None = None) -> dict[str, float | int]:
        """The numbers a run keeps."""
        total = self.highest + 1 if sent is None else sent
        span_s = (self.last_ns - self.first_ns) / 1e9
        delays = sorted(self.delays_us)

        def pct(q: float) -> float:
            return round(delays[min(len(delays) - 1, int(q * len(delays)))], 1) if delays else 0.0

        return {
            "received": self.received, "unique": self.unique, "duplicates": self.duplicates,
            "reordered": self.reordered, "highest": self.highest, "lost": self.lost(sent),
            "loss_rate": self.lost(sent) / total if total > 0 else 0.0,
            "goodput_mbps": self.payload_bytes * 8 / span_s / 1e6 if span_s > 0 else 0.0,
            "span_s": round(span_s, 6), "delay_p50_us": pct(0.5), "delay_p99_us": pct(0.99),
            "delay_max_us": round(delays[-1], 1) if delays else 0.0,
        }


def send(dest: str, port: int, mbps: float, size: int, seconds: float) -> dict[str, float | int]:
    """Send `size`-byte payloads at `mbps` (counting IP and UDP headers) for `seconds`."""
    size = max(size, MIN_PAYLOAD)
    gap_ns = (size + UDP_IP_OVERHEAD) * 8 * 1e3 / mbps
    filler = bytes(size - STAMP.size)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    start = time.monotonic_ns()
    end = start + int(seconds * 1e9)
    seq = errors = 0
    while True:
        due = start + int(seq * gap_ns)
        now = time.monotonic_ns()
        if due >= end:
            break
        if due > now:
            time.sleep((due - now) / 1e9)
        try:
            sock.sendto(STAMP.pack(seq, time.monotonic_ns()) + filler, (dest, port))
        except OSError:
            errors += 1  # a full socket buffer (ENOBUFS): the datagram was not sent
            continue
        seq += 1
    elapsed = (time.monotonic_ns() - start) / 1e9
    return {"sent": seq, "send_errors": errors, "seconds": round(elapsed, 6),
            "offered_mbps": round(seq * (size + UDP_IP_OVERHEAD) * 8 / elapsed / 1e6, 3)}


def receive(port: int, seconds: float, idle_s: float = 1.0, bind: str = "0.0.0.0") -> UdpAccount:
    """Receive for up to `seconds`, or until `idle_s` passes without a datagram after the first."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    sock.bind((bind, port))
    account = UdpAccount()
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        sock.settimeout(min(left, idle_s) if account.received else left)
        try:
            data = sock.recv(65536)
        except TimeoutError:
            if account.received:
                break
            continue
        now = time.monotonic_ns()
        if len(data) >= STAMP.size:
            seq, sent = STAMP.unpack_from(data)
            account.add(seq, sent, len(data), now)
    sock.close()
    return account


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lgkit.workloads.udpstress",
                                     description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="role", required=True)
    tx = sub.add_parser("send")
    tx.add_argument("--dest", required=True)
    tx.add_argument("--port", type=int, default=5400)
    tx.add_argument("--mbps", type=float, required=True, help="rate including IP/UDP headers")
    tx.add_argument("--size", type=int, default=1472, help="payload bytes per datagram")
    tx.add_argument("--seconds", type=float, default=10.0)
    rx = sub.add_parser("recv")
    rx.add_argument("--port", type=int, default=5400)
    rx.add_argument("--seconds", type=float, default=15.0, help="listen at most this long")
    rx.add_argument("--idle", type=float, default=1.0, help="stop this long after the last")
    rx.add_argument("--sent", type=int, help="datagrams the sender sent (for the loss count)")
    args = parser.parse_args(argv)
    if args.role == "send":
        print(json.dumps(send(args.dest, args.port, args.mbps, args.size, args.seconds)))
    else:
        print(json.dumps(receive(args.port, args.seconds, args.idle).report(args.sent)),
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
