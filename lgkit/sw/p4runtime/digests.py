"""Digests: DigestEntry configuration and DigestList messages built from pipeline digests."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator

import grpc
from finsy.proto import p4d, p4i, p4r

from . import codec
from .errors import P4RTError, not_found
from .state import DeviceState
from .tables import DELETE, INSERT


def write_digest_entry(state: DeviceState, kind: int, msg: p4r.DigestEntry) -> None:
    state.index.digest(msg.digest_id)
    configured = msg.digest_id in state.digest_configs
    if kind == INSERT and configured:
        raise P4RTError(grpc.StatusCode.ALREADY_EXISTS, f"digest {msg.digest_id} is configured")
    if kind != INSERT and not configured:
        raise not_found(f"digest {msg.digest_id} is not configured")
    if kind == DELETE:
        del state.digest_configs[msg.digest_id]
    else:
        state.digest_configs[msg.digest_id] = msg.config


def read_digest_entries(state: DeviceState, request: p4r.DigestEntry) -> Iterator[p4r.DigestEntry]:
    if request.digest_id:
        state.index.digest(request.digest_id)
    for digest_id, config in sorted(state.digest_configs.items()):
        if request.digest_id in (0, digest_id):
            yield p4r.DigestEntry(digest_id=digest_id, config=config)


class DigestLists:
    """Groups emitted digests into DigestList messages for the configured digest ids."""

    def __init__(self) -> None:
        self._list_ids = itertools.count(1)

    def build(self, state: DeviceState,
              emitted: list[tuple[str, tuple[int, ...]]]) -> list[p4r.DigestList]:
        by_name = {d.preamble.name: d for d in state.index.digests.values()}
        by_name.update({d.preamble.alias: d for d in state.index.digests.values()})
        grouped: dict[int, list[p4d.P4Data]] = {}
        for name, values in emitted:
            digest = by_name.get(name)
            if digest is None or digest.preamble.id not in state.digest_configs:
                continue
            grouped.setdefault(digest.preamble.id, []).append(_encode(state, digest, values))
        lists = []
        now = time.time_ns()
        for digest_id, data in grouped.items():
            size = state.digest_configs[digest_id].max_list_size or len(data)
            for start in range(0, len(data), size):
                lists.append(p4r.DigestList(digest_id=digest_id, list_id=next(self._list_ids),
                                            data=data[start:start + size], timestamp=now))
        return lists


def _encode(state: DeviceState, digest: p4i.Digest, values: tuple[int, ...]) -> p4d.P4Data:
    if digest.type_spec.WhichOneof("type_spec") == "bitstring":
        return p4d.P4Data(bitstring=codec.encode(values[0]))
    members = [p4d.P4Data(bitstring=codec.encode(v)) for v in values]
    return p4d.P4Data(struct=p4d.P4StructLike(members=members))

