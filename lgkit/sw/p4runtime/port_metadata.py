"""TNA port metadata over P4Runtime: an ExternEntry of bf-p4c's PortMetadata extern (type 144)
whose `entry` is a P4Data struct of bitstrings, the ingress port then the port metadata type's
fields in order (the kit's encoding: P4Runtime leaves an extern entry's contents to the
architecture). DELETE and a Read of one port need the port alone; a Read without `entry`
returns every port that has an entry."""

from __future__ import annotations

from collections.abc import Iterator

from finsy.proto import p4d, p4r

from lgkit.sw.exec.arch.tna import port_metadata
from lgkit.sw.lang.tna_p4info import TNA_PORT_METADATA

from . import codec
from .errors import invalid, not_found, unimplemented
from .state import DeviceState
from .tables import DELETE

PORT_BITS = 9  # PortId_t


def _check(state: DeviceState, msg: p4r.ExternEntry) -> list[int]:
    """The extern entry's bitstrings (after checking it names the port metadata extern)."""
    if msg.extern_type_id != TNA_PORT_METADATA:
        raise unimplemented(f"extern type {msg.extern_type_id}: only port metadata "
                            f"({TNA_PORT_METADATA}) has extern entries")
    ids = {i.preamble.id for e in state.index.p4info.externs
           if e.extern_type_id == TNA_PORT_METADATA for i in e.instances}
    if msg.extern_id not in ids:
        raise not_found(f"no port metadata extern {msg.extern_id}")
    if not msg.HasField("entry"):
        return []
    widths = [PORT_BITS, *port_metadata.port_metadata_fields(state.pipeline).values()]
    data = p4d.P4Data()
    members = data.struct.members if msg.entry.Unpack(data) and data.HasField("struct") else None
    if members is None or not 1 <= len(members) <= len(widths) or any(
            m.WhichOneof("data") != "bitstring" for m in members):
        raise invalid(f"port metadata: entry must be a P4Data struct of the port and "
                      f"{len(widths) - 1} field bitstrings")
    return [codec.decode(m.bitstring, w, "port metadata")
            for m, w in zip(members, widths, strict=False)]


def write_extern(state: DeviceState, kind: int, msg: p4r.ExternEntry) -> None:
    values = _check(state, msg)
    if not values:
        raise invalid("port metadata: the entry names no port")
    if kind == DELETE:
        port_metadata.set_values(state.pipeline, values[0], None)
        return
    fields = port_metadata.port_metadata_fields(state.pipeline)
    if len(values) != len(fields) + 1:
        raise invalid(f"port metadata: entry must be a P4Data struct of the port and "
                      f"{len(fields)} field bitstrings")
    port_metadata.set_values(state.pipeline, values[0], values[1:])


def read_externs(state: DeviceState, request: p4r.ExternEntry) -> Iterator[p4r.ExternEntry]:
    wanted = _check(state, request)[:1]
    for port, values in port_metadata.entries(state.pipeline).items():
        if wanted in ([], [port]):
            data = p4d.P4Data()
            data.struct.members.extend(p4d.P4Data(bitstring=codec.encode(v))
                                       for v in [port, *values])
            out = p4r.ExternEntry(extern_type_id=TNA_PORT_METADATA, extern_id=request.extern_id)
            out.entry.Pack(data)
            yield out
