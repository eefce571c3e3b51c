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


def set_port_metadata(pl: Pipeline, words: list[str]) -> None:
    """`port_metadata PORT [FIELD=VALUE]...`: PORT's entry (ValueError on a bad one)."""
    if not words:
        raise ValueError(f"usage: port_metadata {USAGE['port_metadata']}")
    t = port_metadata_type(pl)
    if t is None:
        raise ValueError("the program reads no port metadata (no port_metadata_unpack)")
    port = parse_int(words[0], "PORT", 0, PORTS - 1)
    widths = {name: scalar_width(ft) for name, ft in t.fields}
    values: dict[str, int] = {}
    for word in words[1:]:
        name, eq, text = word.partition("=")
        if not eq or name not in widths:
            raise ValueError(f"{word!r} is not FIELD=VALUE of {t.name} "
                             f"({', '.join(widths)})")
        values[name] = parse_int(text, name, 0, (1 << widths[name]) - 1)
    acc = nbits = 0
    for name, width in widths.items():
        acc, nbits = acc << width | values.get(name, 0), nbits + width
    bits = PORT_METADATA_BYTES * 8
    if nbits > bits:
        raise ValueError(f"{t.name} has {nbits} bits; port metadata has {bits}")
    assert isinstance(pl.slots, Slots)
    pl.slots.port_metadata[port] = (acc << bits - nbits).to_bytes(PORT_METADATA_BYTES, "big")

