"""Values in the exercises' runtime JSON (MAC and IPv4 strings, integers) -> P4Runtime bytes."""

import ipaddress
import re

MAC = re.compile(r"^([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}$")


def encode(value, bitwidth):
    """Big-endian bytes of `value` in ceil(bitwidth / 8) bytes."""
    width = (bitwidth + 7) // 8
    if isinstance(value, (bytes, bytearray)):
        number = int.from_bytes(value, "big")
    elif isinstance(value, str) and MAC.match(value):
        number = int(value.replace(":", ""), 16)
    elif isinstance(value, str) and value.count(".") == 3:
        number = int(ipaddress.IPv4Address(value))
    elif isinstance(value, str):
        number = int(value, 0)
    else:
        number = int(value)
    if number < 0 or number >= 1 << (8 * width):
        raise ValueError(f"{value!r} does not fit in {bitwidth} bits")
    return number.to_bytes(width, "big")


def decode_int(data):
    return int.from_bytes(data, "big")
