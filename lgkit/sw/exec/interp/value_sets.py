"""Parser value sets: run-time sets of keyset values that a select case matches against."""

from __future__ import annotations

from lgkit.sw.exec.interp.tables import KeyMatch, KeySpec, key_matcher, normalised_key


class ValueSet:
    """`value_set<T>(size)` of a parser: up to `size` members, each one KeyMatch per field of T
    (one field for a non-struct T). The control plane replaces all members at once (P4Runtime
    writes a value set as a whole); a select case naming the set matches a key tuple if any
    member matches every field."""

    def __init__(self, name: str, size: int, fields: list[KeySpec]) -> None:
        self.name = name
        self.size = size
        self.fields = fields
        self._members: list[list[KeyMatch | None]] = []
        self._matchers: tuple[tuple[tuple[int, int, int] | None, ...], ...] = ()

    def members(self) -> list[list[KeyMatch | None]]:
        return [list(m) for m in self._members]

    def set_members(self, members: list[list[KeyMatch | None]]) -> None:
        """Replace the members; ValueError (and no change) if one is malformed or there are
        more than `size`."""
        if len(members) > self.size:
            raise ValueError(f"{self.name}: {len(members)} members, at most {self.size}")
        normed = []
        for member in members:
            if len(member) != len(self.fields):
                raise ValueError(f"{self.name}: a member has {len(member)} fields, expected "
                                 f"{len(self.fields)}")
            normed.append([normalised_key(s, k) for s, k in zip(self.fields, member,
                                                                 strict=True)])
        self._members = normed
        self._matchers = tuple(tuple(key_matcher(s, k) for s, k in zip(self.fields, m,
                                                                        strict=True))
                               for m in normed)

    def contains(self, keys: tuple[int, ...]) -> bool:
        """Whether a member matches the select keys (values as unsigned bit patterns)."""
        for member in self._matchers:
            for m, v in zip(member, keys, strict=True):
                if m is not None and (
                        (m[0] == 0 and v & m[1] != m[2]) or (m[0] == 1 and not m[1] <= v <= m[2])):
                    break
            else:
                return True
        return False
