"""PABO's bounce header as a checksum-neutral IPv4 option (p4/pabo.p4).

Layout (12 bytes): type 0xDE, length 12, bounces (the paper's n_p, bouncedHop), distance
(bouncedDistance), max distance (maxBouncedDistance), total hops (totalHop), a backward flag (the
last hop was a bounce) and 15 reserved bits, seal (16 bits), reserved (16 bits).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from lgkit.schemes import ipoption

BOUNCE_TYPE = 0xDE
"IPv4 option type: copy 1, class 2, number 30 (the experimental number of RFC 4727)."
LAYOUT = struct.Struct("!BBBBBBHHH")


@dataclass(frozen=True)
class BounceInfo:
    """One packet's bounce header."""

    bounces: int = 0
    distance: int = 0
    max_distance: int = 0
    total_hops: int = 0
    backward: bool = False

    def pack(self) -> bytes:
        """The sealed 12-byte option."""
        raw = LAYOUT.pack(BOUNCE_TYPE, ipoption.OPTION_LEN, self.bounces, self.distance,
                          self.max_distance, self.total_hops, int(self.backward) << 15, 0, 0)
        return ipoption.seal(raw)

    @classmethod
    def unpack(cls, option: bytes) -> BounceInfo:
        """Decode a bounce option (ValueError if it is something else)."""
        kind, length, bounces, distance, max_distance, hops, flags, _, _ = LAYOUT.unpack(option)
        if kind != BOUNCE_TYPE or length != ipoption.OPTION_LEN:
            raise ValueError("not a bounce option")
        return cls(bounces, distance, max_distance, hops, bool(flags >> 15))


def read(ip: bytes) -> BounceInfo | None:
    """The bounce header of an IPv4 packet, if it carries one."""
    option = ipoption.option_of(ip, BOUNCE_TYPE)
    return BounceInfo.unpack(option) if option is not None else None
