"""Parser value sets: P4Runtime ValueSetEntry <-> the pipeline's ValueSet members."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
from finsy.proto import p4i, p4r

from .errors import P4RTError, invalid
from .state import DeviceState
from .tables import MODIFY, decode_fields, encode_field


def write_value_set(state: DeviceState, kind: int, msg: p4r.ValueSetEntry) -> None:
    """A value set is written whole: MODIFY replaces every member (an empty list clears it)."""
    if kind != MODIFY:
        raise invalid("value set entries can only be modified")
    info = state.index.value_set(msg.value_set_id)
    value_set = state.pipeline.value_sets[info.preamble.name]
    if len(msg.members) > info.size:
        raise P4RTError(grpc.StatusCode.RESOURCE_EXHAUSTED,
                        f"{info.preamble.name} holds at most {info.size} members, "
                        f"got {len(msg.members)}")
    members = [decode_fields(info.preamble.name, info.match, m.match) for m in msg.members]
    try:
        value_set.set_members(members)
    except ValueError as exc:
        raise invalid(str(exc)) from None


def read_value_sets(state: DeviceState, request: p4r.ValueSetEntry
                    ) -> Iterator[p4r.ValueSetEntry]:
    """One entry per value set (all of them for value_set_id 0), with its members."""
    if request.value_set_id == 0:
        infos = list(state.index.value_sets.values())
    else:
        infos = [state.index.value_set(request.value_set_id)]
    for info in infos:
        yield _encode(info, state.pipeline.value_sets[info.preamble.name].members())


def _encode(info: p4i.ValueSet, members: list) -> p4r.ValueSetEntry:
    msg = p4r.ValueSetEntry(value_set_id=info.preamble.id)
    for member in members:
        out = msg.members.add()
        for mf, key in zip(info.match, member, strict=True):
            fm = encode_field(mf, key)
            if fm is not None:
                out.match.append(fm)
    return msg
