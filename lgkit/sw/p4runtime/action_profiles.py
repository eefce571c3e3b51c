"""Action profile members and groups: P4Runtime ActionProfileMember/Group <-> the pipeline's
ActionProfile (tables.py handles the entries that point at them)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
from finsy.proto import p4i, p4r

from .errors import P4RTError, invalid, not_found, unimplemented
from .state import DeviceState
from .tables import DELETE, INSERT, decode_params, encode_action


def write_member(state: DeviceState, kind: int, msg: p4r.ActionProfileMember) -> None:
    info, profile = _profile(state, msg.action_profile_id)
    _check_existence(kind, msg.member_id in profile.members, f"{profile.name}: member",
                     msg.member_id)
    if kind == DELETE:
        _in_use(profile.delete_member, msg.member_id)
        return
    action, params = _decode_action(state, info, msg.action)
    if kind == INSERT:
        if len(profile.members) >= profile.size:
            raise P4RTError(grpc.StatusCode.RESOURCE_EXHAUSTED,
                            f"{profile.name} holds at most {profile.size} members")
        profile.add_member(msg.member_id, action, params)
    else:
        profile.modify_member(msg.member_id, action, params)


def write_group(state: DeviceState, kind: int, msg: p4r.ActionProfileGroup) -> None:
    info, profile = _profile(state, msg.action_profile_id)
    if not info.with_selector:
        raise invalid(f"{profile.name} has no selector: it holds no groups")
    _check_existence(kind, msg.group_id in profile.groups, f"{profile.name}: group",
                     msg.group_id)
    if kind == DELETE:
        _in_use(profile.delete_group, msg.group_id)
        return
    members = _decode_members(profile, msg)
    max_size = msg.max_size if kind == INSERT else profile.groups[msg.group_id].max_size
    if info.max_group_size and max_size > info.max_group_size:
        raise invalid(f"{profile.name}: max_size {max_size} exceeds the profile's "
                      f"max_group_size {info.max_group_size}")
    if max_size and len(members) > max_size:
        raise P4RTError(grpc.StatusCode.RESOURCE_EXHAUSTED,
                        f"{profile.name}: group {msg.group_id} holds at most {max_size} members")
    profile.set_group(msg.group_id, members, msg.max_size, insert=kind == INSERT)


def read_members(state: DeviceState, request: p4r.ActionProfileMember
                 ) -> Iterator[p4r.ActionProfileMember]:
    """Members of one profile (or every profile: id 0); member_id 0 reads them all."""
    for info, profile in _selected(state, request.action_profile_id):
        for member in sorted(profile.members.values(), key=lambda m: m.member_id):
            if request.member_id and member.member_id != request.member_id:
                continue
            msg = p4r.ActionProfileMember(action_profile_id=info.preamble.id,
                                          member_id=member.member_id)
            msg.action.CopyFrom(encode_action(state, member.action, member.params))
            yield msg


def read_groups(state: DeviceState, request: p4r.ActionProfileGroup
                ) -> Iterator[p4r.ActionProfileGroup]:
    for info, profile in _selected(state, request.action_profile_id):
        for group in sorted(profile.groups.values(), key=lambda g: g.group_id):
            if request.group_id and group.group_id != request.group_id:
                continue
            msg = p4r.ActionProfileGroup(action_profile_id=info.preamble.id,
                                         group_id=group.group_id, max_size=group.max_size)
            for member_id, weight in sorted(group.members.items()):
                msg.members.add(member_id=member_id, weight=weight)
            yield msg


def _check_existence(kind: int, exists: bool, what: str, ident: int) -> None:
    """INSERT needs a new id (else ALREADY_EXISTS), MODIFY and DELETE an existing one."""
    if kind == INSERT and exists:
        raise P4RTError(grpc.StatusCode.ALREADY_EXISTS, f"{what} {ident} exists")
    if kind != INSERT and not exists:
        raise not_found(f"{what} {ident} does not exist")


def _profile(state: DeviceState, profile_id: int) -> tuple[p4i.ActionProfile, Any]:
    info = state.index.action_profile(profile_id)
    return info, state.pipeline.action_profiles[info.preamble.name]


def _selected(state: DeviceState, profile_id: int) -> list[tuple[p4i.ActionProfile, Any]]:
    ids = [profile_id] if profile_id else list(state.index.action_profiles)
    return [_profile(state, i) for i in ids]


def _decode_action(state: DeviceState, info: p4i.ActionProfile,
                   action: p4r.Action) -> tuple[str, list[int]]:
    """A member's action: one its tables may run as an entry's action (not @defaultonly)."""
    allowed: dict[int, int] = {}
    for table_id in info.table_ids:
        for ref in state.index.table(table_id).action_refs:
            allowed[ref.id] = ref.scope
    if action.action_id not in allowed:
        raise invalid(f"action {action.action_id:#x} is not an action of "
                      f"{info.preamble.name}'s tables")
    if allowed[action.action_id] == p4i.ActionRef.DEFAULT_ONLY:
        raise P4RTError(grpc.StatusCode.PERMISSION_DENIED,
                        "this action can only be a default action (@defaultonly)")
    spec = state.index.action(action.action_id)
    return spec.preamble.name, decode_params(spec, action.params)


def _decode_members(profile: Any, msg: p4r.ActionProfileGroup) -> dict[int, int]:
    members: dict[int, int] = {}
    for member in msg.members:
        if member.member_id in members:
            raise invalid(f"{profile.name}: member {member.member_id} given twice")
        if member.member_id not in profile.members:
            raise not_found(f"{profile.name}: no member {member.member_id}")
        if member.weight != 1:
            raise unimplemented("member weights other than 1 are not supported "
                                "(BMv2's groups have no weights)")
        if member.WhichOneof("watch_kind") is not None:
            raise unimplemented("watch ports are not supported")
        members[member.member_id] = member.weight
    return members


def _in_use(delete: Any, ident: int) -> None:
    try:
        delete(ident)
    except ValueError as exc:
        raise P4RTError(grpc.StatusCode.FAILED_PRECONDITION, str(exc)) from None
