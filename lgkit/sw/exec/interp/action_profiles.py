"""Action profiles and action selectors: members, groups and the choice of a member by hash.

A table whose `implementation` is an `action_profile` or `action_selector` holds no actions:
each entry points at a member (an action with its data) or, for a selector, a group of
members. As BMv2 does, every member gets the lowest free handle (0, 1, ...) when it is made,
and a group picks its member `H % n`-th in handle order, where H is the selector's hash
algorithm over the table's `selector` keys packed as a field list and n the group's size.
An entry pointing at an empty group runs no action (BMv2 logs "yielded empty group").
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lgkit.sw.exec.interp.hashes import pack_bits
from lgkit.sw.exec.interp.tables import ActionInfo, Hit, TableEntry, no_op

if TYPE_CHECKING:
    from lgkit.sw.exec.interp.tables import Table


@dataclass
class Member:
    """One member: an action and its data; `handle` orders the members of a group."""

    member_id: int
    action: str
    params: list[int]
    handle: int


@dataclass
class Group:
    """A group of members (member id -> weight; the weight is kept, not used: BMv2 has none)."""

    group_id: int
    members: dict[int, int] = field(default_factory=dict)
    max_size: int = 0
    chosen: list[Member] = field(default_factory=list)  # members in handle order


class ActionProfile:
    """The members and groups of one action_profile / action_selector instance.

    `algorithm` (selectors only) maps the packed selector keys to an integer; None for
    HashAlgorithm.random, which draws from the pipeline's generator. Mutations raise
    KeyError (unknown or existing id) or ValueError (bad action/data, still in use, full).
    """

    def __init__(self, name: str, size: int, selector: bool,
                 algorithm: Callable[[bytes], int] | None = None) -> None:
        self.name = name
        self.size = size
        self.selector = selector
        self.algorithm = algorithm
        self.rng = random.Random()  # the pipeline's generator replaces it (HashAlgorithm.random)
        self.tables: list[Table] = []
        self._actions: dict[str, ActionInfo] = {}
        self.members: dict[int, Member] = {}
        self.groups: dict[int, Group] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ control plane

    def attach(self, table: Table) -> None:
        """A table whose implementation this is; its actions become the members' choice."""
        self.tables.append(table)
        self._actions.update({n: a for n, a in table.action_infos().items()
                              if not a.default_only and not a.hidden})

    def action_names(self) -> list[str]:
        return list(self._actions)

    def free_handle(self) -> int:
        """The handle (and, in STF, the id) the next member gets: the lowest unused one."""
        used = {m.handle for m in self.members.values()}
        return next(h for h in range(len(used) + 1) if h not in used)

    def add_member(self, member_id: int, action: str, params: list[int]) -> None:
        self._check_action(action, params)
        with self._lock:
            if member_id in self.members:
                raise KeyError(f"{self.name}: member {member_id} exists")
            if len(self.members) >= self.size:
                raise ValueError(f"{self.name}: profile full ({self.size} members)")
            self.members[member_id] = Member(member_id, action, list(params), self.free_handle())
        self._changed()

    def modify_member(self, member_id: int, action: str, params: list[int]) -> None:
        self._check_action(action, params)
        with self._lock:
            member = self._member(member_id)
            member.action, member.params = action, list(params)
            self._refresh_groups()
        self._changed()

    def delete_member(self, member_id: int) -> None:
        with self._lock:
            self._member(member_id)
            if any(member_id in g.members for g in self.groups.values()):
                raise ValueError(f"{self.name}: member {member_id} is in a group")
            if self._referenced("member", member_id):
                raise ValueError(f"{self.name}: member {member_id} is used by a table entry")
            del self.members[member_id]

    def set_group(self, group_id: int, members: dict[int, int], max_size: int = 0,
                  insert: bool = False) -> None:
        """Create (insert) or replace a group's members (member id -> weight); `max_size`
        (0: no bound) is the group's for good once inserted."""
        if not self.selector:
            raise ValueError(f"{self.name} is an action profile without a selector: no groups")
        with self._lock:
            if insert and group_id in self.groups:
                raise KeyError(f"{self.name}: group {group_id} exists")
            if not insert and group_id not in self.groups:
                raise KeyError(f"{self.name}: no group {group_id}")
            unknown = [m for m in members if m not in self.members]
            if unknown:
                raise KeyError(f"{self.name}: no member {unknown[0]}")
            group = self.groups.get(group_id) or Group(group_id, max_size=max_size)
            if insert:
                group.max_size = max_size
            if group.max_size and len(members) > group.max_size:
                raise ValueError(f"{self.name}: group {group_id} takes at most "
                                 f"{group.max_size} members")
            group.members = dict(members)
            self.groups[group_id] = group
            self._refresh_groups()

    def delete_group(self, group_id: int) -> None:
        with self._lock:
            if group_id not in self.groups:
                raise KeyError(f"{self.name}: no group {group_id}")
            if self._referenced("group", group_id):
                raise ValueError(f"{self.name}: group {group_id} is used by a table entry")
            del self.groups[group_id]

    def check_target(self, member: int | None, group: int | None) -> None:
        """A table entry's member or group (exactly one) must exist (ValueError)."""
        if (member is None) == (group is None):
            raise ValueError(f"{self.name}: an entry points at one member or one group")
        if member is not None and member not in self.members:
            raise ValueError(f"{self.name}: no member {member}")
        if group is not None:
            if not self.selector:
                raise ValueError(f"{self.name} has no selector: entries point at members")
            if group not in self.groups:
                raise ValueError(f"{self.name}: no group {group}")

    # ------------------------------------------------------------------ data plane

    def member_hit(self, member_id: int, entry: TableEntry | None) -> Hit:
        member = self.members[member_id]
        return self._hit_of(member, entry)

    def choose(self, group_id: int, entry: TableEntry | None, keys: tuple, widths: tuple) -> Hit:
        """The member a packet with these selector key values runs."""
        chosen = self.groups[group_id].chosen
        if not chosen:
            return Hit(entry, -1, no_op, ())
        if self.algorithm is None:
            h = self.rng.getrandbits(64)
        else:
            acc, nbits = 0, 0
            for value, width in zip(keys, widths, strict=True):
                acc, nbits = (acc << width) | value, nbits + width
            h = self.algorithm(pack_bits(acc, nbits))
        return self._hit_of(chosen[h % len(chosen)], entry)

    # ------------------------------------------------------------------ internals

    def _hit_of(self, member: Member, entry: TableEntry | None) -> Hit:
        info = self._actions[member.action]
        return Hit(entry, info.action_id, info.fn, info.call_args(member.params))

    def _check_action(self, action: str, params: list[int]) -> None:
        info = self._actions.get(action)
        if info is None:
            raise ValueError(f"{self.name}: action {action} is not an action of its tables")
        info.check_params(self.name, params)

    def _member(self, member_id: int) -> Member:
        member = self.members.get(member_id)
        if member is None:
            raise KeyError(f"{self.name}: no member {member_id}")
        return member

    def _referenced(self, kind: str, ident: int) -> bool:
        return any(getattr(e, kind) == ident for t in self.tables for e in t.entries())

    def _refresh_groups(self) -> None:
        for group in self.groups.values():
            group.chosen = sorted((self.members[m] for m in group.members),
                                  key=lambda m: m.handle)

    def _changed(self) -> None:
        for table in self.tables:
            table.invalidate()

