"""Vertigo's flowinfo (paper Fig. 3) as a checksum-neutral IPv4 option, and the boosting
rotation of its remaining flow size (RFS).

Layout (12 bytes): type 0x5E, length 12, RFS (32 bits, rotated right once per
retransmission), retcnt (4 bits), flow id (3 bits), first-packet flag (1 bit), deflections
(8 bits, counted by switches; ours), seal (16 bits), then 16 bits of which the top one says the
rank is the flow's age (LAS) rather than its remaining size (ours; the rest reserved).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from lgkit.schemes import ipoption

FLOWINFO_TYPE = 0x5E
"IPv4 option type: copy 0, class 2, number 30 (the experimental number of RFC 4727)."
MAX_RETCNT = 15
MASK32 = 0xFFFFFFFF
LAYOUT = struct.Struct("!BBIBBHH")


def rotr(value: int, count: int) -> int:
    """32-bit right rotation (the sender's boosting: halves the rank per retransmission)."""
    count %= 32
    return ((value >> count) | (value << (32 - count))) & MASK32


def rotl(value: int, count: int) -> int:
    """32-bit left rotation (the receiver undoes the boosting)."""
    return rotr(value, 32 - count % 32)


@dataclass(frozen=True)
class FlowInfo:
    """One packet's flowinfo, as the sender marked it."""

    rfs: int
    "Remaining flow size in bytes from this packet's first byte on, as sent (rotated)."
    retcnt: int = 0
    flow_id: int = 0
    first: bool = False
    deflections: int = 0
    aged: bool = False
    "The rank is the bytes the connection sent before this packet (LAS), not what remains."

    @classmethod
    def marked(cls, remaining: int, retcnt: int = 0, flow_id: int = 0, first: bool = False,
               aged: bool = False) -> FlowInfo:
        """The flowinfo of a packet with `remaining` bytes to go (or, `aged`, sent before it),
        sent for the retcnt-th time after the first (its RFS rotated right retcnt times)."""
        retcnt = min(retcnt, MAX_RETCNT)
        return cls(rotr(min(remaining, MASK32), retcnt), retcnt, flow_id & 7, first, 0, aged)

    @property
    def original_rfs(self) -> int:
        """The RFS before boosting (what the receiver orders by)."""
        return rotl(self.rfs, self.retcnt)

    @property
    def rank(self) -> int:
        """The rank switches use: the original RFS halved per retransmission (p4/vertigo.p4
        masks off the bits the rotation brought in at the top)."""
        return self.rfs & (MASK32 >> self.retcnt)

    def pack(self) -> bytes:
        """The sealed 12-byte option."""
        meta = (self.retcnt & 0xF) << 4 | (self.flow_id & 7) << 1 | int(self.first)
        raw = LAYOUT.pack(FLOWINFO_TYPE, ipoption.OPTION_LEN, self.rfs, meta,
                          self.deflections & 0xFF, 0, int(self.aged) << 15)
        return ipoption.seal(raw)

    @classmethod
    def unpack(cls, option: bytes) -> FlowInfo:
        """Decode a flowinfo option (ValueError if it is something else)."""
        kind, length, rfs, meta, deflections, _, flags = LAYOUT.unpack(option)
        if kind != FLOWINFO_TYPE or length != ipoption.OPTION_LEN:
            raise ValueError("not a flowinfo option")
        return cls(rfs, meta >> 4, (meta >> 1) & 7, bool(meta & 1), deflections,
                   bool(flags >> 15))


def read(ip: bytes) -> FlowInfo | None:
    """The flowinfo of an IPv4 packet, if it carries one."""
    option = ipoption.option_of(ip, FLOWINFO_TYPE)
    return FlowInfo.unpack(option) if option is not None else None
