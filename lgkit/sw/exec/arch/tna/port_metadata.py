"""Tofino's per-port metadata on the TNA model: the 64 bits the ingress parser reads after the
intrinsic metadata (port_metadata_unpack<T>), set by the control plane per ingress port, as
bf-p4c's `$PORT_METADATA` table of the ingress parser (key: the ingress port; data: T's fields
by name; an unset port reads zero).

Command (the same words in STF and `lgkit switch`'s control):
  port_metadata PORT [FIELD=VALUE]...   T's fields of PORT's entry (those not named: 0)
The model packs T's fields from the most significant bit, as port_metadata_unpack reads them;
bf-p4c places them in its own containers (context.json), which no program can observe."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lgkit.sw.exec.arch.tna.passes import PORT_METADATA_BYTES, Slots
from lgkit.sw.exec.arch.tna.pktgen import parse_int
from lgkit.sw.exec.externs.tna_functions import PORT_METADATA_TYPE
from lgkit.sw.exec.interp.layout import scalar_width
from lgkit.sw.lang.types import StructLikeT

if TYPE_CHECKING:
    from lgkit.sw.exec.pipeline import Pipeline

USAGE = {"port_metadata": "PORT [FIELD=VALUE]..."}
PORTS = 1 << 9  # PortId_t: bit<9>


def port_metadata_type(pl: Pipeline) -> StructLikeT | None:
    """The program's port metadata type T (None: it calls no port_metadata_unpack)."""
    t = pl.code.ns.get(PORT_METADATA_TYPE)
    return t if isinstance(t, StructLikeT) else None


def port_metadata_fields(pl: Pipeline) -> dict[str, int]:
    """T's fields and their widths, in order (ValueError when the program reads none)."""
    t = port_metadata_type(pl)
    if t is None:
        raise ValueError("the program reads no port metadata (no port_metadata_unpack)")
    return {name: scalar_width(ft) for name, ft in t.fields}


def set_port_metadata(pl: Pipeline, words: list[str]) -> None:
    """`port_metadata PORT [FIELD=VALUE]...`: PORT's entry (ValueError on a bad one)."""
    if not words:
        raise ValueError(f"usage: port_metadata {USAGE['port_metadata']}")
    widths = port_metadata_fields(pl)
    port = parse_int(words[0], "PORT", 0, PORTS - 1)
    values: dict[str, int] = {}
    for word in words[1:]:
        name, eq, text = word.partition("=")
        if not eq or name not in widths:
            t = port_metadata_type(pl)
            raise ValueError(f"{word!r} is not FIELD=VALUE of {t.name if t else 'T'} "
                             f"({', '.join(widths)})")
        values[name] = parse_int(text, name, 0, (1 << widths[name]) - 1)
    set_values(pl, port, [values.get(name, 0) for name in widths])


def set_values(pl: Pipeline, port: int, values: list[int] | None) -> None:
    """PORT's entry: T's field values in order, each within its width (None: no entry)."""
    slots = pl.slots
    assert isinstance(slots, Slots)
    if values is None:
        slots.port_metadata.pop(port, None)
        return
    acc = nbits = 0
    for value, width in zip(values, port_metadata_fields(pl).values(), strict=True):
        acc, nbits = acc << width | value, nbits + width
    bits = PORT_METADATA_BYTES * 8
    if nbits > bits:
        raise ValueError(f"the port metadata type has {nbits} bits; port metadata has {bits}")
    slots.port_metadata[port] = (acc << bits - nbits).to_bytes(PORT_METADATA_BYTES, "big")


def entries(pl: Pipeline) -> dict[int, list[int]]:
    """The ports with an entry and their field values, in T's order."""
    slots = pl.slots
    assert isinstance(slots, Slots)
    widths = list(port_metadata_fields(pl).values())
    out: dict[int, list[int]] = {}
    for port, data in sorted(slots.port_metadata.items()):
        rest, values = int.from_bytes(data, "big") >> PORT_METADATA_BYTES * 8 - sum(widths), []
        for width in reversed(widths):
            values.append(rest & (1 << width) - 1)
            rest >>= width
        out[port] = values[::-1]
    return out
