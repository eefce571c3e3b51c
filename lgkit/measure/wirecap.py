"""Retransmission delay from a capture of the protected link (any target): read the pcap, decode
LinkGuardian data headers, and time each loss from its detection to its retransmission.

The capture is taken on the wire just before the receiver (after the injector's drops), so it
sees what the receiver sees. A loss is detected when a fresh data frame or the dummy reveals a
gap in the sequence numbers (docs/protocol.md §3.2); its retransmission delay is the time from
that frame to the first retransmitted copy of the lost sequence number (paper App. B.1).
"""

from __future__ import annotations

import struct
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from lgkit.core.child import stop_process

ETHERTYPE_LG = 0xABCD
SEQ_SPACE = 1 << 17
"(era, seq_no): 17-bit serial numbers."
PCAP_MAGIC = {b"\xd4\xc3\xb2\xa1": ("<", 1e-6), b"\xa1\xb2\xc3\xd4": (">", 1e-6),
              b"\x4d\x3c\xb2\xa1": ("<", 1e-9), b"\xa1\xb2\x3c\x4d": (">", 1e-9)}


@dataclass(frozen=True)
class LgFrame:
    """A captured LinkGuardian data frame."""

    t_s: float
    seq: int
    "17-bit (era << 16 | seq_no)."
    retx: bool
    dummy: bool


def read_pcap(path: Path) -> Iterator[tuple[float, bytes]]:
    """(timestamp s, frame bytes) of each record of a classic pcap file (a truncated last
    record, from a capture stopped mid-write, is ignored)."""
    data = Path(path).read_bytes()
    if len(data) < 24 or data[:4] not in PCAP_MAGIC:
        raise ValueError(f"{path}: not a pcap file")
    order, unit = PCAP_MAGIC[data[:4]]
    record = struct.Struct(order + "IIII")
    offset = 24
    while offset + record.size <= len(data):
        sec, frac, caplen, _ = record.unpack_from(data, offset)
        offset += record.size
        if offset + caplen > len(data):
            return
        yield sec + frac * unit, data[offset:offset + caplen]
        offset += caplen


def lg_data_frames(frames: Iterable[tuple[float, bytes]]) -> Iterator[LgFrame]:
    """The LG data headers (type 0) among captured Ethernet frames."""
    for t, frame in frames:
        if len(frame) < 17 or int.from_bytes(frame[12:14], "big") != ETHERTYPE_LG:
            continue
        first = frame[14]
        if first >> 6 != 0:
            continue
        era = first >> 4 & 1
        seq = era << 16 | int.from_bytes(frame[15:17], "big")
        yield LgFrame(t, seq, bool(first >> 3 & 1), bool(first >> 2 & 1))


@dataclass(frozen=True)
class RetxDelays:
    """Retransmission delays of one capture."""

    delays_us: list[float]
    unrecovered: int
    "Losses detected whose retransmission never showed up in the capture."


def retransmission_delays(frames: Iterable[LgFrame]) -> RetxDelays:
    """Time from the detection of each loss to the first retransmitted copy of it."""
    expected: int | None = None
    detected: dict[int, float] = {}
    delays: list[float] = []
    for f in frames:
        if f.retx:
            if f.seq in detected:
                delays.append((f.t_s - detected.pop(f.seq)) * 1e6)
            continue
        if expected is None:
            expected = f.seq if not f.dummy else (f.seq + 1) % SEQ_SPACE
            if f.dummy:
                continue
        gap = (f.seq - expected) % SEQ_SPACE
        if gap >= SEQ_SPACE // 2:
            continue  # an old sequence number (behind expected): nothing new
        missing = gap + 1 if f.dummy else gap
        for k in range(missing):
            detected.setdefault((expected + k) % SEQ_SPACE, f.t_s)
        expected = (f.seq + 1) % SEQ_SPACE
    return RetxDelays(delays, len(detected))


class WireCapture:
    """tcpdump of LG frames on one root-namespace interface, into a pcap file."""

    def __init__(self, iface: str, path: Path, snaplen: int = 64) -> None:
        self.iface, self.path, self.snaplen = iface, Path(path), snaplen
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> WireCapture:
        self.process = subprocess.Popen(
            ["tcpdump", "-i", self.iface, "-s", str(self.snaplen), "-U", "-w", str(self.path),
             "--time-stamp-precision=nano", "ether", "proto", str(ETHERTYPE_LG)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        return self

    def __exit__(self, *exc: object) -> None:
        stop_process(self.process, 5.0)
