"""What the code generator plans for tables and actions; the P4Info name of a declaration."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lgkit.sw.lang import ir

ConstEntryCode = tuple[list[tuple[str, ...]], str, list[str], str | None]
"A const entry as code: its key matches, action, arguments and priority (None: by position)."


@dataclass
class ActionPlan:
    qname: str
    fn: str
    action_id: int
    widths: list[int]
    signed: list[bool]
    table_only: bool = False
    default_only: bool = False


@dataclass
class TablePlan:
    qname: str
    var: str
    decl: ir.TableDecl
    keys: list[Any]
    actions: list[ActionPlan]
    default: tuple[str, list[str]]
    default_is_const: bool
    size: int
    entries: list[ConstEntryCode] = field(default_factory=list)
    entries_const: bool = False
    largest_priority_wins: bool = True
    bmv2_priorities: bool = False  # const entries use @priority(n): the smallest n wins
    direct_counter: str | None = None
    direct_meter: str | None = None
    direct_register: str | None = None  # TNA's DirectRegister: a hit's cell is entry.register
    direct_counter_kind: str = "packets_and_bytes"
    direct_meter_kind: str = "bytes"
    support_timeout: bool = False  # hits stamp entry.last_hit_us (P4Runtime idle timeout)
    profile: Any = None  # the ActionProfile of `implementation = <action_profile/selector>`


def qualified(prefix: str, decl: ir.Decl) -> str:
    """The P4Info name of a declaration: @name annotations honoured, '.x' is absolute."""
    name = decl.name
    ann = decl.annotations.get("name") if decl.annotations else None
    if ann:
        text = "".join(ann).strip().strip('"')
        if text.startswith("."):
            return text[1:]
        name = text
    return prefix + name
