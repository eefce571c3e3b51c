"""Test frames (Ethernet/IPv4/UDP carrying a packet id) and readers of LG headers on the wire."""

from __future__ import annotations

import random
import struct
from dataclasses import dataclass

ETHERTYPE_IPV4 = 0x0800
ETHERTYPE_LG = 0xABCD
ID_OFFSET = 14 + 20 + 8  # Ethernet + IPv4 + UDP: the packet id leads the UDP payload


def mac_bytes(mac: str) -> bytes:
    return bytes(int(part, 16) for part in mac.split(":"))


def ip_bytes(ip: str) -> bytes:
    return bytes(int(part) for part in ip.split("."))


def ipv4_checksum(header: bytes) -> int:
    total: int = sum(struct.unpack(f"!{len(header) // 2}H", header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def udp_frame(src_mac: str, dst_mac: str, src_ip: str, dst_ip: str, packet_id: int,
              size: int = 1000, ecn: int = 0) -> bytes:
    """An Ethernet/IPv4/UDP frame of `size` bytes whose payload starts with `packet_id`."""
    payload_len = max(4, size - ID_OFFSET)
    udp = struct.pack("!HHHH", 5000, 6000, 8 + payload_len, 0)
    total_len = 20 + 8 + payload_len
    header = struct.pack("!BBHHHBBH4s4s", 0x45, ecn, total_len, packet_id & 0xFFFF, 0, 64, 17,
                         0, ip_bytes(src_ip), ip_bytes(dst_ip))
    header = header[:10] + struct.pack("!H", ipv4_checksum(header)) + header[12:]
    payload = struct.pack("!I", packet_id) + bytes(payload_len - 4)
    eth = mac_bytes(dst_mac) + mac_bytes(src_mac) + struct.pack("!H", ETHERTYPE_IPV4)
    return eth + header + udp + payload


def packet_id(frame: bytes) -> int | None:
    """The id of a plain test frame (None for anything else)."""
    if len(frame) < ID_OFFSET + 4 or frame[12:14] != b"\x08\x00":
        return None
    value: int = struct.unpack_from("!I", frame, ID_OFFSET)[0]
    return value


@dataclass(frozen=True)
class LgWire:
    """What an LG frame on the wire says (the headers of docs/protocol.md §1)."""

    seq: int | None = None          # 17-bit (era, seq_no) of a data header
    retx: bool = False
    dummy: bool = False
    blocking: bool = False
    ack: int | None = None          # 17-bit leading ACK
    piggybacked: bool = False
    xoff: bool = False
    holes: tuple[int, int] | None = None   # (first_lost 16-bit, hole_size) of a notification
    pause: bool | None = None       # True = pause, False = resume
    inner_id: int | None = None     # packet id of the payload, if any

    @property
    def is_original(self) -> bool:
        return self.seq is not None and not self.retx and not self.dummy


def parse_lg(frame: bytes) -> LgWire | None:
    """Decode the LG headers of a frame (None if it is not an LG frame, or one cut short)."""
    if len(frame) < 17 or frame[12:14] != b"\xab\xcd":
        return None
    try:
        return _parse_lg(frame)
    except (IndexError, struct.error):  # a truncated header: what a switch would not parse
        return None


def _parse_lg(frame: bytes) -> LgWire:
    fields: dict[str, object] = {}
    at = 14
    payload = False
    kind = frame[at] >> 6
    if kind == 0:
        b0, seq = frame[at], struct.unpack_from("!H", frame, at + 1)[0]
        more, era = (b0 >> 5) & 1, (b0 >> 4) & 1
        fields.update(seq=(era << 16) | seq, retx=bool((b0 >> 3) & 1),
                      dummy=bool((b0 >> 2) & 1), blocking=bool((b0 >> 1) & 1))
        at += 3
        payload = not fields["dummy"]
        if more:
            kind = frame[at] >> 6
        else:
            kind = -1
    if kind in (1, 2):
        b0, ack = frame[at], struct.unpack_from("!H", frame, at + 1)[0]
        fields.update(ack=(((b0 >> 4) & 1) << 16) | ack, piggybacked=bool((b0 >> 5) & 1),
                      xoff=bool((b0 >> 3) & 1))
        payload = bool(fields["piggybacked"])
        at += 3
        if kind == 2:
            size, first = frame[at], struct.unpack_from("!H", frame, at + 1)[0]
            fields["holes"] = (first, size)
            at += 3
    elif kind == 3:
        fields["pause"] = bool((frame[at] >> 5) & 1)
        at += 3
    if payload and len(frame) >= at + 2 + 28 + 4:
        inner = frame[at:at + 2]
        if inner == b"\x08\x00":
            fields["inner_id"] = struct.unpack_from("!I", frame, at + 2 + 28)[0]
    return LgWire(**fields)  # type: ignore[arg-type]


class FrameStream:
    """Test frames h1 -> h2 with ids first_id, first_id + 1, ...: sizes drawn from `mix`, a
    sequence of (size, weight) (seeded), each frame patched from a per-size template."""

    def __init__(self, src: tuple[str, str], dst: tuple[str, str],
                 mix: tuple[tuple[int, float], ...] = ((1514, 1.0),), seed: int = 0,
                 first_id: int = 0) -> None:
        if not mix or any(not ID_OFFSET + 4 <= size <= 9000 or w <= 0 for size, w in mix):
            raise ValueError(f"frame mix needs sizes in {ID_OFFSET + 4}..9000, weights > 0")
        (smac, sip), (dmac, dip) = src, dst
        self.templates = {size: udp_frame(smac, dmac, sip, dip, 0, size) for size, _ in mix}
        self.sizes = [size for size, _ in mix]
        self.weights = [w for _, w in mix]
        self.rng = random.Random(f"frames/{seed}")
        self.next_id = first_id

    def frame(self, size: int) -> bytes:
        """The next frame of this size (the id is the only byte that differs)."""
        template = self.templates[size]
        pid = self.next_id
        self.next_id += 1
        return template[:ID_OFFSET] + struct.pack("!I", pid) + template[ID_OFFSET + 4:]

    def next_size(self) -> int:
        if len(self.sizes) == 1:
            return self.sizes[0]
        return self.rng.choices(self.sizes, self.weights)[0]
