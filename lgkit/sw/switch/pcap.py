"""Minimal pcap (libpcap, microsecond, Ethernet) file writer for port captures."""

from __future__ import annotations

import struct
import time

PCAP_MAGIC_US = 0xA1B2C3D4
LINKTYPE_ETHERNET = 1
SNAPLEN = 65535


class PcapWriter:
    """Appends frames with wall-clock timestamps; `flush` makes the file readable mid-run."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._file = open(path, "wb")  # noqa: SIM115 - closed by close()
        self._file.write(struct.pack("<IHHiIII", PCAP_MAGIC_US, 2, 4, 0, 0, SNAPLEN,
                                     LINKTYPE_ETHERNET))
        self._record = struct.Struct("<IIII").pack

    def write(self, data: bytes) -> None:
        t = time.time_ns() // 1000
        n = len(data)
        self._file.write(self._record(t // 1_000_000, t % 1_000_000, n, n))
        self._file.write(data)

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()
