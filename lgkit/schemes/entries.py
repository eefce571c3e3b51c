"""Table writes that both kinds of switch take: a loaded pipeline (virtual time, tests) and a
P4Runtime session (Mininet, BMv2 or the built-in switch)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import finsy

from lgkit.sw.exec.interp.tables import Exact, Lpm, Range, TableEntry

if TYPE_CHECKING:
    from lgkit.sw.exec.pipeline import Pipeline

Match = Exact | Lpm | Range


@dataclass(frozen=True)
class Write:
    """One table write: the default action (no match) or an entry.

    `match` and `params` are given in the order the program declares its keys and action
    parameters (the pipeline takes them by position, P4Runtime by name)."""

    table: str
    action: str
    params: dict[str, int]
    match: dict[str, Match] = field(default_factory=dict)
    priority: int = 0

    @property
    def is_default(self) -> bool:
        """True for a default action."""
        return not self.match


def to_pipeline(pipeline: Pipeline, writes: Iterable[Write]) -> None:
    """Apply writes to a `lgkit.sw` pipeline (entries inserted, or modified if present)."""
    for write in writes:
        table = pipeline.tables[write.table]
        params = list(write.params.values())
        if write.is_default:
            table.set_default(write.action, params)
            continue
        entry = TableEntry(list(write.match.values()), write.action, params, write.priority)
        if table.find(entry.keys, entry.priority) is None:
            table.insert(entry)
        else:
            table.modify(entry)


def _p4rt_value(match: Match) -> Any:
    if isinstance(match, Exact):
        return match.value
    if isinstance(match, Lpm):
        return (match.value, match.prefix_len)
    return f"{match.lo}...{match.hi}"


def p4runtime_entry(write: Write) -> finsy.P4TableEntry:
    """The finsy table entry of a write."""
    action = finsy.P4TableAction(write.action, **write.params)
    if write.is_default:
        return finsy.P4TableEntry(write.table, action=action, is_default_action=True)
    match = finsy.P4TableMatch({k: _p4rt_value(v) for k, v in write.match.items()})
    return finsy.P4TableEntry(write.table, match=match, action=action, priority=write.priority)


def to_session(session: Any, writes: Iterable[Write], modify: bool = False) -> None:
    """Apply writes through a P4RuntimeSession: default actions are modified, entries inserted
    (or modified with `modify`), in one batch each."""
    writes = list(writes)
    defaults = [p4runtime_entry(w) for w in writes if w.is_default]
    entries = [p4runtime_entry(w) for w in writes if not w.is_default]
    if defaults:
        session.modify(defaults)
    if entries:
        (session.modify if modify else session.insert)(entries)
