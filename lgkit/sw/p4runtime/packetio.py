"""Packet I/O: @controller_header metadata packed MSB-first in front of the payload."""

from __future__ import annotations

from finsy.proto import p4i, p4r

from . import codec
from .errors import invalid


def header_bytes(header: p4i.ControllerPacketMetadata) -> int:
    return (sum(m.bitwidth for m in header.metadata) + 7) // 8


def encode_packet_out(header: p4i.ControllerPacketMetadata | None, msg: p4r.PacketOut) -> bytes:
    """The frame injected at the CPU port: packed packet_out metadata, then the payload."""
    if header is None:
        if msg.metadata:
            raise invalid("the program has no packet_out controller header")
        return msg.payload
    specs = {m.id: m for m in header.metadata}
    values: dict[int, int] = {}
    for meta in msg.metadata:
        if meta.metadata_id not in specs:
            raise invalid(f"unknown packet_out metadata id {meta.metadata_id}")
        if meta.metadata_id in values:
            raise invalid(f"packet_out metadata id {meta.metadata_id} given twice")
        spec = specs[meta.metadata_id]
        values[meta.metadata_id] = codec.decode(meta.value, spec.bitwidth, spec.name)
    missing = [m.name for m in header.metadata if m.id not in values]
    if missing:
        raise invalid(f"packet_out metadata missing: {', '.join(missing)}")
    packed, bits = 0, 0
    for spec in header.metadata:
        packed = (packed << spec.bitwidth) | values[spec.id]
        bits += spec.bitwidth
    pad = -bits % 8
    return codec.encode_width(packed << pad, bits + pad) + msg.payload


def decode_packet_in(header: p4i.ControllerPacketMetadata | None, frame: bytes) -> p4r.PacketIn:
    """A frame sent to the CPU port as a PacketIn; its leading bytes are the packet_in header."""
    if header is None:
        return p4r.PacketIn(payload=frame)
    size = header_bytes(header)
    bits = sum(m.bitwidth for m in header.metadata)
    packed = int.from_bytes(frame[:size].ljust(size, b"\0"), "big") >> (size * 8 - bits)
    metadata: list[p4r.PacketMetadata] = []
    for spec in reversed(header.metadata):
        value = packed & ((1 << spec.bitwidth) - 1)
        packed >>= spec.bitwidth
        metadata.append(p4r.PacketMetadata(metadata_id=spec.id, value=codec.encode(value)))
    return p4r.PacketIn(payload=frame[size:], metadata=reversed(metadata))
