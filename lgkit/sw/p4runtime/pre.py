"""The packet replication engine: clone sessions and multicast groups (bmv2-facts.md section 5)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import grpc
from finsy.proto import p4r

from . import codec
from .errors import P4RTError, invalid, not_found, out_of_range, unimplemented
from .tables import DELETE, INSERT

if TYPE_CHECKING:
    from lgkit.sw.exec.pipeline import Pipeline

MAX_CLONE_SESSION = 511
MAX_MIRROR_SESSION = 1023
"A TNA program's sessions: MirrorId_t is 10 bits on Tofino 1 (tofino1_specs.p4)."
MAX_MULTICAST_GROUP = 32767
PORT_WIDTH = 32


def _replica_pairs(replicas: Any) -> list[tuple[int, int]]:
    """(port, instance) pairs; a repeated pair is INVALID_ARGUMENT."""
    pairs: list[tuple[int, int]] = []
    for replica in replicas:
        if replica.backup_replicas:
            raise unimplemented("backup replicas are not supported")
        if replica.WhichOneof("port_kind") == "port":
            port = codec.decode(replica.port, PORT_WIDTH, "replica port")
        else:
            port = replica.egress_port
        if (port, replica.instance) in pairs:
            raise invalid(f"replica (port {port}, instance {replica.instance}) given twice")
        pairs.append((port, replica.instance))
    return pairs


def _apply(groups: dict[int, Any], key: int, kind: int, value: Any, what: str) -> None:
    if kind == INSERT and key in groups:
        raise P4RTError(grpc.StatusCode.ALREADY_EXISTS, f"{what} {key} exists")
    if kind != INSERT and key not in groups:
        raise not_found(f"{what} {key} does not exist")
    if kind == DELETE:
        del groups[key]
    else:
        groups[key] = value


def write_pre(pipeline: Pipeline, kind: int, msg: p4r.PacketReplicationEngineEntry) -> None:
    which = msg.WhichOneof("type")
    if which == "clone_session_entry":
        _write_clone_session(pipeline, kind, msg.clone_session_entry)
    elif which == "multicast_group_entry":
        _write_multicast_group(pipeline, kind, msg.multicast_group_entry)
    else:
        raise invalid("empty packet replication engine entry")


def _write_clone_session(pipeline: Pipeline, kind: int, entry: p4r.CloneSessionEntry) -> None:
    top = MAX_MIRROR_SESSION if pipeline.arch.name == "tna" else MAX_CLONE_SESSION
    if not 1 <= entry.session_id <= top:
        raise out_of_range(f"clone session id {entry.session_id} not in 1..{top}")
    for field in ("class_of_service", "packet_length_bytes"):
        if getattr(entry, field) and pipeline.arch.name != "tna":
            raise unimplemented(f"clone session {field} must be 0 (TNA programs only)")
    pairs = _replica_pairs(entry.replicas) if kind != DELETE else []
    _apply(pipeline.clone_sessions, entry.session_id, kind, pairs, "clone session")
    for setting, value in ((pipeline.mirror_max_len, entry.packet_length_bytes),
                           (pipeline.mirror_queue, entry.class_of_service)):
        setting.pop(entry.session_id, None)
        if kind != DELETE and value:
            setting[entry.session_id] = value


def _write_multicast_group(pipeline: Pipeline, kind: int, entry: p4r.MulticastGroupEntry) -> None:
    if not 1 <= entry.multicast_group_id <= MAX_MULTICAST_GROUP:
        raise out_of_range(
            f"multicast group id {entry.multicast_group_id} not in 1..{MAX_MULTICAST_GROUP}")
    if entry.metadata:
        raise unimplemented("multicast group metadata is not supported")
    replicas: list[tuple[int, int]] = []
    if kind != DELETE:
        pairs = _replica_pairs(entry.replicas)
        for instance in dict.fromkeys(inst for _, inst in pairs):
            replicas += [(instance, port) for port, inst in pairs if inst == instance]
    _apply(pipeline.mc_groups, entry.multicast_group_id, kind, replicas, "multicast group")


PreEntry = p4r.PacketReplicationEngineEntry


def read_pre(pipeline: Pipeline, request: PreEntry) -> Iterator[PreEntry]:
    which = request.WhichOneof("type")
    if which == "clone_session_entry":
        wanted = request.clone_session_entry.session_id
        for sid, pairs in sorted(pipeline.clone_sessions.items()):
            if wanted in (0, sid):
                cut = pipeline.mirror_max_len.get(sid, 0)
                entry = p4r.CloneSessionEntry(session_id=sid, replicas=_replicas(pairs),
                                              packet_length_bytes=cut,
                                              class_of_service=pipeline.mirror_queue.get(sid, 0))
                yield p4r.PacketReplicationEngineEntry(clone_session_entry=entry)
    elif which == "multicast_group_entry":
        wanted = request.multicast_group_entry.multicast_group_id
        for mgid, nodes in sorted(pipeline.mc_groups.items()):
            if wanted in (0, mgid) and mgid <= MAX_MULTICAST_GROUP:
                pairs = [(port, rid) for rid, port in nodes]
                entry = p4r.MulticastGroupEntry(multicast_group_id=mgid, replicas=_replicas(pairs))
                yield p4r.PacketReplicationEngineEntry(multicast_group_entry=entry)
    else:
        raise invalid("a packet replication engine read needs a clone session or multicast group")


def _replicas(pairs: list[tuple[int, int]]) -> list[p4r.Replica]:
    return [p4r.Replica(port=codec.encode(port), instance=instance) for port, instance in pairs]
