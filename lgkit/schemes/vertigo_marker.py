"""Vertigo's marking on send (paper §3.1): every outgoing TCP data segment gets a flowinfo
option with the remaining size of its flow, the times it was retransmitted (its RFS rotated
right that often: boosting), the flow id and the first-packet flag.

The flow size must come from the application (the paper's marking component is told it). Ours
reads it from the byte stream of length-prefixed protocols: on a stream sent to one of
`framed_ports` or from one of `framed_source_ports`, every message starts with its total length
in 4 bytes, big-endian (the kit's FCT workload frames its flows and its incast replies so,
lgkit/workloads/fct.py). Each message is a flow. A segment belongs to the message its first
byte is in; when messages follow each other in one stream, a segment may end inside the next
message, and that message's first packet is the first segment that begins inside it (so every
flow's packets chain: each one's RFS less its length is the next one's, as the receiver orders
them). Other streams fall back to flow aging (the paper's LAS, §4.3): the rank is the bytes
the connection has sent before this packet, and the option's flags say so. So do framed streams
the marker did not see from their SYN on, and from where it finds a length below 4, streams
whose framing it lost: reading lengths out of a message's body would split it into thousands of
tiny flows.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from lgkit.schemes import ipoption
from lgkit.schemes.flowinfo import FlowInfo

LENGTH_PREFIX = struct.Struct("!I")
SYN, FIN, RST = 0x02, 0x01, 0x04
MASK32 = 0xFFFFFFFF
KEEP_MESSAGES = 64
"Finished messages kept per connection (to mark their retransmissions)."

Key = tuple[bytes, int, bytes, int]
"(source address, source port, destination address, destination port)"


@dataclass(frozen=True)
class Segment:
    """What the marker needs of an IPv4/TCP packet."""

    key: Key
    seq: int
    flags: int
    payload: bytes

    @classmethod
    def parse(cls, ip: bytes) -> Segment | None:
        """The TCP segment of a plain (no IP options) IPv4 packet, else None."""
        if len(ip) < 40 or ip[0] != 0x45 or ip[9] != 6:
            return None
        total = struct.unpack_from("!H", ip, 2)[0]
        sport, dport, seq = struct.unpack_from("!HHI", ip, 20)
        offset = (ip[32] >> 4) * 4
        return cls((ip[12:16], sport, ip[16:20], dport), seq, ip[33], ip[20 + offset:total])


@dataclass
class Message:
    """One flow: bytes [start, end) of the connection's stream (offsets from its first byte)."""

    index: int
    start: int
    end: int
    first_at: int | None = None
    "Offset of the first segment that began inside this message (its first packet)."


@dataclass
class Connection:
    """The marker's state of one outgoing byte stream."""

    base: int
    "Sequence number of the stream's first byte."
    framed: bool
    sent: int = 0
    "Highest offset sent so far (snd_max)."
    messages: list[Message] = field(default_factory=list)
    next_start: int = 0
    "Offset where the next message's length prefix begins."
    partial: bytes = b""
    "Bytes of a length prefix split across segments."
    retx: dict[int, int] = field(default_factory=dict)
    "offset -> times a segment starting there was sent again."

    def offset(self, seq: int) -> int:
        return (seq - self.base) & MASK32


@dataclass
class MarkerStats:
    """What the marker did."""

    marked: int = 0
    retransmissions: int = 0
    flows: int = 0
    aged: int = 0
    "Segments marked by age (no length prefix on their connection)."
    skipped: int = 0
    "Packets left as they were (not TCP data, or already carrying IP options)."
    lost_framing: int = 0
    "Connections whose framing the marker lost (a length prefix below 4): aged from there on."


class Marker:
    """Marks outgoing packets; `mark(ip)` returns the packet to send."""

    def __init__(self, framed_ports: set[int] | frozenset[int] = frozenset(),
                 framed_source_ports: set[int] | frozenset[int] = frozenset()) -> None:
        self.framed_ports = frozenset(framed_ports)
        self.framed_source_ports = frozenset(framed_source_ports)
        self.connections: dict[Key, Connection] = {}
        self.stats = MarkerStats()

    def mark(self, ip: bytes) -> bytes:
        """The packet with a flowinfo option (or unchanged, see MarkerStats.skipped)."""
        segment = Segment.parse(ip)
        if segment is None:
            self.stats.skipped += 1
            return ip
        conn = self._connection(segment)
        if segment.flags & (FIN | RST) and not segment.payload:
            if segment.flags & RST:
                self.connections.pop(segment.key, None)
            self.stats.skipped += 1
            return ip
        if not segment.payload:
            self.stats.skipped += 1
            return ip
        info = self._flowinfo(conn, segment)
        self.stats.marked += 1
        return ipoption.insert(ip, info.pack())

    def _connection(self, segment: Segment) -> Connection:
        conn = self.connections.get(segment.key)
        if segment.flags & SYN:
            conn = None  # a new connection (or a SYN retransmitted: the same base)
        if conn is None:
            base = (segment.seq + 1) & MASK32 if segment.flags & SYN else segment.seq
            # a stream's framing can be followed only from its first byte on: its SYN
            framed = bool(segment.flags & SYN) and (segment.key[3] in self.framed_ports
                                                    or segment.key[1] in self.framed_source_ports)
            conn = Connection(base, framed)
            self.connections[segment.key] = conn
        return conn

    def _flowinfo(self, conn: Connection, segment: Segment) -> FlowInfo:
        start = conn.offset(segment.seq)
        end = start + len(segment.payload)
        retcnt = 0
        if start < conn.sent:
            retcnt = conn.retx[start] = conn.retx.get(start, 0) + 1
            self.stats.retransmissions += 1
        if conn.framed and end > conn.sent:
            self._read_prefixes(conn, start, segment.payload)
        conn.sent = max(conn.sent, end)
        message = next((m for m in reversed(conn.messages) if m.start <= start < m.end), None)
        if message is None:
            self.stats.aged += 1
            return FlowInfo.marked(start, retcnt, aged=True)
        if message.first_at is None:
            message.first_at = start
        return FlowInfo.marked(message.end - start, retcnt, message.index,
                               first=start == message.first_at)

    def _read_prefixes(self, conn: Connection, start: int, payload: bytes) -> None:
        """Register every message whose length prefix this (new) data holds."""
        end = start + len(payload)
        while conn.next_start < end:
            at = conn.next_start - start
            if at < 0:  # the prefix began in an earlier segment
                if conn.next_start + len(conn.partial) != start:
                    return  # a hole before it: wait for the bytes in order
                wanted = LENGTH_PREFIX.size - len(conn.partial)
                prefix = conn.partial + payload[:wanted]
            else:
                prefix = payload[at:at + LENGTH_PREFIX.size]
            if len(prefix) < LENGTH_PREFIX.size:
                conn.partial = prefix
                return
            conn.partial = b""
            size = LENGTH_PREFIX.unpack(prefix)[0]
            if size < LENGTH_PREFIX.size:  # no message is shorter than its prefix: not framed
                conn.framed = False
                self.stats.lost_framing += 1
                return
            index = conn.messages[-1].index + 1 if conn.messages else 0
            conn.messages.append(Message(index, conn.next_start, conn.next_start + size))
            conn.next_start += size
            self.stats.flows += 1
        if len(conn.messages) > KEEP_MESSAGES:
            del conn.messages[:-KEEP_MESSAGES]
            oldest = conn.messages[0].start
            conn.retx = {k: v for k, v in conn.retx.items() if k >= oldest}
