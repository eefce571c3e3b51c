"""P4Runtime byte strings <-> integers: canonical (minimal-width) encoding and bitwidth checks."""

from __future__ import annotations

from .errors import invalid


def decode(data: bytes, width: int, what: str) -> int:
    """Decode a big-endian byte string (spec "Bytestrings"): leading zero bytes are accepted;
    an empty string or a value wider than `width` is not a valid bytestring (INVALID_ARGUMENT)."""
    if not data:
        raise invalid(f"{what}: empty byte string")
    value = int.from_bytes(data, "big")
    if value >> width:
        raise invalid(f"{what}: value {shown(data)} does not fit in {width} bits")
    return value


def shown(data: bytes, most: int = 16) -> str:
    """A byte string for an error message: hex, its middle cut beyond `most` bytes."""
    if len(data) <= most:
        return f"0x{data.hex()}"
    half = most // 2
    return f"0x{data[:half].hex()}...{data[-half:].hex()} ({len(data)} bytes)"


def encode(value: int) -> bytes:
    """The canonical byte string of a non-negative integer (zero is one zero byte)."""
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def encode_width(value: int, width: int) -> bytes:
    """Fixed-width big-endian bytes (ceil(width / 8) bytes) for data-plane headers."""
    return value.to_bytes((width + 7) // 8, "big")
