"""STF (p4c's simple test format) parsing, running on the built-in target, and per-port diffs.

Statements (keywords case-insensitive, `#` starts a comment):
  packet PORT HEX                      expect PORT [HEX]   (`*` = any nibble, trailing `$` = exact)
  add TABLE [PRIO] KEY:VALUE... ACTION(PARAM:VALUE, ...)
      VALUE forms: 10, 0x0a, 0b1010, 0x0a**  (ternary don't-care / LPM prefix), V&&&M, V/LEN, LO->HI
  setdefault TABLE ACTION(PARAM:VALUE, ...)
  mirroring_add SESSION PORT           mirroring_add_mc SESSION MGID
  mc_mgrp_create MGID   mc_node_create RID PORT...   mc_node_associate MGID HANDLE
  counter_read NAME INDEX [packets|bytes OP VALUE]   counter_write NAME INDEX PACKETS BYTES
  check_counter NAME(INDEX) [packets|bytes] OP VALUE
  register_read NAME INDEX [OP VALUE]  register_write NAME INDEX VALUE   register_reset NAME
  meter_set_rates NAME INDEX RATE:BURST RATE:BURST   meter_array_set_rates NAME RATE:BURST ...
  wait [DURATION]                      (DURATION: an integer with ns, us, ms or s: `wait 20ms`)
TNA programs (the kit's addition; lgkit/sw/exec/arch/tna/pktgen.py): the packet generator's
  pktgen_timer APP PERIOD_NS [one_shot] [OPTION=VALUE...]   pktgen_port_down APP [OPTION=VALUE...]
  pktgen_disable APP   port_down PORT
  and the ingress port metadata (arch/tna/port_metadata.py): port_metadata PORT [FIELD=VALUE]...
Time (the virtual clock of untimed runs, lgkit/sw/exec/passclock.py): each packet is processed
to completion when it is sent, every pass costing the clock a fixed time; `wait` alone lets no
time pass (there is nothing left to wait for), `wait DURATION` (the kit's addition) lets that
much virtual time pass before the next statement (TNA: the timer packets due meanwhile run, and
queues a PFC pause held leave when it ends).
Action profiles and selectors (the kit's addition, simple_switch_CLI's words; members and
groups get BMv2's handles: 0, 1, ... in creation order):
  act_prof_create_member PROFILE ACTION(PARAM:VALUE, ...)   act_prof_create_group PROFILE
  act_prof_add_member_to_group PROFILE MEMBER GROUP
  table_indirect_add TABLE [PRIO] KEY:VALUE... => MEMBER
  table_indirect_add_with_group TABLE [PRIO] KEY:VALUE... => GROUP
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, TypeVar

from finsy.proto import p4i

from lgkit.sw.exec.arch.tna.pktgen import USAGE as PKTGEN_USAGE
from lgkit.sw.exec.arch.tna.port_metadata import USAGE as PORT_METADATA_USAGE
from lgkit.sw.lang.tna_p4info import standard_view

if TYPE_CHECKING:
    from lgkit.sw.exec.externs.counter import CounterArray
    from lgkit.sw.exec.externs.meter import MeterArray
    from lgkit.sw.exec.externs.register import RegisterArray
    from lgkit.sw.exec.interp.action_profiles import ActionProfile
    from lgkit.sw.exec.pipeline import KeyMatch, Pipeline

COMPARE: dict[str, Callable[[int, int], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
IMPLICIT_PRIORITY_BASE = 1 << 24
Named = TypeVar("Named")


class ExternArray(Protocol):
    """A register, counter or meter array: indices run from 0 to size - 1."""

    size: int


class StfError(Exception):
    """A bad STF line, or one the program cannot satisfy (unknown table, action, ...)."""

    def __init__(self, file: str, line: int, message: str) -> None:
        self.file, self.line, self.message = file, line, message
        super().__init__(f"{file}:{line}: error: {message}")


# --------------------------------------------------------------------------- statements


@dataclass
class Stmt:
    line: int


@dataclass
class PacketStmt(Stmt):
    port: int
    data: bytes


@dataclass
class ExpectStmt(Stmt):
    port: int
    pattern: str | None  # upper-case hex nibbles and '*'; None = any packet
    exact: bool = False


@dataclass
class AddStmt(Stmt):
    table: str
    priority: int | None
    keys: list[tuple[str, str]]
    action: str
    args: list[tuple[str, str]]


@dataclass
class SetDefaultStmt(Stmt):
    table: str
    action: str
    args: list[tuple[str, str]]


@dataclass
class CommandStmt(Stmt):
    """Every other statement: the keyword and its words."""

    keyword: str
    words: list[str] = field(default_factory=list)


HEX_RE = re.compile(r"[0-9a-fA-F*]*")
ACTION_RE = re.compile(r"^(?P<name>[^\s(]+)\s*\((?P<args>.*)\)\s*$", re.S)


def strip_comment(line: str) -> str:
    return line.split("#", 1)[0].strip()


def parse_stf(text: str, filename: str = "<stf>") -> list[Stmt]:
    """Parse STF text into statements; raises StfError with the line of the first bad one."""
    stmts: list[Stmt] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = strip_comment(raw)
        if not line:
            continue
        try:
            stmts.append(parse_line(line, number))
        except ValueError as exc:
            raise StfError(filename, number, str(exc)) from None
    return stmts


def parse_line(line: str, number: int) -> Stmt:
    keyword, _, rest = line.partition(" ")
    keyword = keyword.lower()
    rest = rest.strip()
    if keyword == "packet":
        port, data = parse_port_and_data(rest, keyword)
        data = data or ""  # `packet N` alone sends an empty packet, as p4c's runner does
        if "*" in data or data.endswith("$"):
            raise ValueError("packet needs plain hex data")
        if len(data) % 2:
            raise ValueError(f"packet data has an odd number of hex digits ({len(data)})")
        return PacketStmt(number, port, bytes.fromhex(data))
    if keyword == "expect":
        port, data = parse_port_and_data(rest, keyword)
        if data is None:
            return ExpectStmt(number, port, None)
        exact = data.endswith("$")
        return ExpectStmt(number, port, data.rstrip("$").upper(), exact)
    if keyword == "add":
        return parse_add(rest, number)
    if keyword == "setdefault":
        table, _, action_text = rest.partition(" ")
        if not table or not action_text.strip():
            raise ValueError("usage: setdefault TABLE ACTION(PARAM:VALUE, ...)")
        action, args = parse_action(action_text.strip())
        return SetDefaultStmt(number, table, action, args)
    if keyword == "act_prof_create_member":
        profile, _, action_text = rest.partition(" ")
        if not profile or not action_text.strip():
            raise ValueError(f"{keyword}: expected {usage_of(keyword)}")
        parse_action(action_text.strip())
        return CommandStmt(number, keyword, [profile, action_text.strip()])
    if keyword in ("table_indirect_add", "table_indirect_add_with_group"):
        words = rest.split()
        if len(words) < 3 or words[-2] != "=>" or not words[-1].isdigit():
            raise ValueError(f"{keyword}: expected {usage_of(keyword)}")
        return CommandStmt(number, keyword, words)
    if keyword in COMMAND_ARITY:
        words = rest.split()
        low, high = COMMAND_ARITY[keyword]
        if not low <= len(words) <= high:
            raise ValueError(f"{keyword}: expected {usage_of(keyword)}")
        if keyword == "wait" and words:
            parse_duration(words[0])
        return CommandStmt(number, keyword, words)
    raise ValueError(f"unknown STF statement '{keyword}'")


COMMAND_USAGE = {
    "mirroring_add": "SESSION PORT",
    "mirroring_add_mc": "SESSION MGID",
    "mc_mgrp_create": "MGID",
    "mc_node_create": "RID PORT...",
    "mc_node_associate": "MGID HANDLE",
    "counter_read": "NAME INDEX [packets|bytes OP VALUE]",
    "counter_write": "NAME INDEX PACKETS BYTES",
    "check_counter": "NAME(INDEX) [packets|bytes] OP VALUE",
    "register_read": "NAME INDEX [OP VALUE]",
    "register_write": "NAME INDEX VALUE",
    "register_reset": "NAME",
    "meter_set_rates": "NAME INDEX RATE:BURST RATE:BURST",
    "meter_array_set_rates": "NAME RATE:BURST RATE:BURST",
    "wait": "[DURATION] (e.g. 20ms, 500us)",
    **PKTGEN_USAGE,
    **PORT_METADATA_USAGE,
    "act_prof_create_member": "PROFILE ACTION(PARAM:VALUE, ...)",
    "act_prof_create_group": "PROFILE",
    "act_prof_add_member_to_group": "PROFILE MEMBER GROUP",
    "table_indirect_add": "TABLE [PRIO] KEY:VALUE ... => MEMBER",
    "table_indirect_add_with_group": "TABLE [PRIO] KEY:VALUE ... => GROUP",
}
ARCH_USAGE = PKTGEN_USAGE | PORT_METADATA_USAGE  # the architecture runs these (arch.command)
COMMAND_ARITY = {
    "mirroring_add": (2, 2),
    "mirroring_add_mc": (2, 2),
    "mc_mgrp_create": (1, 1),
    "mc_node_create": (1, 1000),
    "mc_node_associate": (2, 2),
    "counter_read": (2, 5),
    "counter_write": (4, 4),
    "check_counter": (3, 4),
    "register_read": (2, 4),
    "register_write": (3, 3),
    "register_reset": (1, 1),
    "meter_set_rates": (3, 4),
    "meter_array_set_rates": (2, 3),
    "wait": (0, 1),
    "pktgen_timer": (2, 9),
    "pktgen_port_down": (1, 5),
    "pktgen_disable": (1, 1),
    "port_down": (1, 1),
    "port_metadata": (1, 65),
    "act_prof_create_group": (1, 1),
    "act_prof_add_member_to_group": (3, 3),
}


DURATION_RE = re.compile(r"(?P<count>[0-9]+)(?P<unit>ns|us|ms|s)")
NS_PER_UNIT = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
MAX_WAIT_NS = (1 << 48) * 1_000
"The timestamps' range (48 bits of microseconds): a longer wait could not be told apart."


def parse_duration(text: str) -> int:
    """`wait`'s DURATION (20ms, 500us, 1s, 100ns) in nanoseconds."""
    match = DURATION_RE.fullmatch(text.lower())
    if match is None:
        raise ValueError(f"wait: bad duration '{text}' (an integer with ns, us, ms or s: 20ms)")
    ns = int(match["count"]) * NS_PER_UNIT[match["unit"]]
    if ns > MAX_WAIT_NS:
        raise ValueError(f"wait: {text} is longer than the timestamps' range (2^48 us)")
    return ns


def usage_of(keyword: str) -> str:
    return COMMAND_USAGE[keyword]


def parse_port_and_data(rest: str, keyword: str) -> tuple[int, str | None]:
    port_text, _, data = rest.partition(" ")
    if not port_text.isdigit():
        raise ValueError(f"{keyword}: expected a port number, got '{port_text}'")
    data = "".join(data.split())
    if not data:
        return int(port_text), None
    body = data[:-1] if data.endswith("$") else data
    if not HEX_RE.fullmatch(body):
        raise ValueError(f"{keyword}: bad hex data '{data}'")
    return int(port_text), data


def parse_add(rest: str, number: int) -> AddStmt:
    match = re.match(r"^(?P<pre>[^(]*?)(?P<action>[^\s(]+\s*\(.*\))\s*(=\s*\S+)?\s*$", rest, re.S)
    if not match:
        raise ValueError("usage: add TABLE [PRIO] KEY:VALUE ... ACTION(PARAM:VALUE, ...)")
    words = match.group("pre").split()
    if not words:
        raise ValueError("add: missing table name")
    table, priority, keys = parse_entry_words(words, "add")
    action, args = parse_action(match.group("action"))
    return AddStmt(number, table, priority, keys, action, args)


def parse_entry_words(words: list[str], keyword: str
                      ) -> tuple[str, int | None, list[tuple[str, str]]]:
    """TABLE [PRIO] KEY:VALUE ... as the table, the priority (None: not given) and the keys."""
    table, rest = words[0], words[1:]
    priority = None
    if rest and rest[0].isdigit():
        priority, rest = int(rest[0]), rest[1:]
    keys = []
    for word in rest:
        name, sep, value = word.partition(":")
        if not sep or not name or not value:
            raise ValueError(f"{keyword}: key '{word}' is not NAME:VALUE")
        keys.append((name, value))
    return table, priority, keys


def parse_indirect_add(words: list[str]) -> tuple[str, int | None, list[tuple[str, str]], int]:
    """TABLE [PRIO] KEY:VALUE ... => HANDLE (table_indirect_add*) as its parts."""
    table, priority, keys = parse_entry_words(words[:-2], "table_indirect_add")
    return table, priority, keys, int(words[-1])


def parse_action(text: str) -> tuple[str, list[tuple[str, str]]]:
    match = ACTION_RE.match(text)
    if not match:
        raise ValueError(f"bad action call '{text}' (expected ACTION(PARAM:VALUE, ...))")
    args = []
    for item in match.group("args").split(","):
        item = item.strip()
        if not item:
            continue
        name, sep, value = item.partition(":")
        if not sep or not name.strip() or not value.strip():
            raise ValueError(f"action argument '{item}' is not NAME:VALUE")
        args.append((name.strip(), value.strip()))
    return match.group("name"), args


# --------------------------------------------------------------------------- values


def parse_int(text: str, width: int | None = None) -> int:
    """An STF number (decimal, 0x, 0b, 0o, possibly negative), wrapped to `width` bits."""
    clean = text.replace("_", "")
    try:
        value = int(clean, 0) if not re.fullmatch(r"-?0\d+", clean) else int(clean, 10)
    except ValueError:
        raise ValueError(f"bad number '{text}'") from None
    if width is not None:
        if value >= 1 << width:
            raise ValueError(f"value {text} does not fit in {width} bits")
        value &= (1 << width) - 1
    return value


def split_radix(text: str) -> tuple[str, int, int]:
    """(digits, base, bits per digit) of a 0x/0b/0o literal."""
    lower = text.lower()
    for prefix, base, bits in (("0x", 16, 4), ("0b", 2, 1), ("0o", 8, 3)):
        if lower.startswith(prefix):
            return text[2:], base, bits
    raise ValueError(f"'{text}' needs a 0x, 0b or 0o prefix to use '*' digits")


def ternary_value(text: str, width: int) -> tuple[int, int]:
    """value, mask of a ternary key: V&&&M, or digits with '*' (mask covers the written digits)."""
    if "&&&" in text:
        value_text, mask_text = text.split("&&&", 1)
        mask = parse_int(mask_text, width)
        return parse_int(value_text, width) & mask, mask
    if text.lower().startswith(("0x", "0b", "0o")):
        digits, base, bits = split_radix(text)
        full = (1 << bits) - 1
        value = mask = 0
        for digit in digits.replace("_", ""):
            value <<= bits
            mask <<= bits
            if digit != "*":
                value |= int(digit, base)
                mask |= full
        if mask >= 1 << width or value >= 1 << width:
            raise ValueError(f"value {text} does not fit in {width} bits")
        return value, mask
    return parse_int(text, width), (1 << width) - 1


def lpm_value(text: str, width: int) -> tuple[int, int]:
    """value, prefix length: V/LEN, or a 0x/0b/0o literal whose prefix length is its written
    non-'*' digits times the bits per digit (as p4c's runner computes it: 0x0a01** is /16 and
    0x12 on a 16-bit key is /8), or a decimal number (full width)."""
    if "/" in text:
        value_text, length_text = text.split("/", 1)
        length = parse_int(length_text)
        if length > width:
            raise ValueError(f"prefix length {length} exceeds the key width {width}")
        return parse_int(value_text, width), length
    if "*" in text or text.lower().startswith(("0x", "0b", "0o")):
        digits, base, bits = split_radix(text)
        value = int(digits.replace("*", "0"), base) if digits else 0
        if value >= 1 << width:
            raise ValueError(f"value {text} does not fit in {width} bits")
        return value, min(width, (len(digits) - digits.count("*")) * bits)
    return parse_int(text, width), width


def range_value(text: str, width: int) -> tuple[int, int]:
    if "->" in text:
        low, high = text.split("->", 1)
        return parse_int(low, width), parse_int(high, width)
    value = parse_int(text, width)
    return value, value


# --------------------------------------------------------------------------- name lookup


def by_name_or_suffix(names: list[str], wanted: str, what: str) -> str:
    """The one name equal to `wanted` or ending with '.wanted'."""
    if wanted in names:
        return wanted
    bare = wanted.lstrip(".")
    found = [n for n in names if n.endswith("." + bare) or n == bare]
    if len(found) == 1:
        return found[0]
    if not found:
        raise ValueError(f"unknown {what} '{wanted}'")
    raise ValueError(f"{what} '{wanted}' is ambiguous: {', '.join(found)}")


def by_name(objects: Mapping[str, Named], wanted: str, what: str) -> Named:
    """The object named `wanted` or '*.wanted' (by_name_or_suffix)."""
    return objects[by_name_or_suffix(list(objects), wanted, what)]


def key_field_name(fields: list[str], wanted: str) -> str:
    """An STF key name (BMv2 JSON style: 'ipv4.dst', 'h$0.f', 'h.valid'; a sliced key by its
    field's name) as a P4Info field name."""
    candidates = [wanted, re.sub(r"\$(\d+)", r"[\1]", wanted)]
    if wanted.endswith(".valid"):
        candidates.append(wanted[: -len("valid")] + "$valid$")
    candidates += [c + ".$valid$" for c in list(candidates)]
    for candidate in candidates:
        if candidate in fields:
            return candidate
    for candidate in candidates:
        found = [f for f in fields if f.endswith("." + candidate)]
        if len(found) == 1:
            return found[0]
    sliced = [f for f in fields if re.sub(r"\[\d+:\d+\]$", "", f) == wanted]  # `a.b[8:0]` as a.b
    if len(sliced) == 1:
        return sliced[0]
    raise ValueError(f"unknown key field '{wanted}' (fields: {', '.join(fields)})")


@dataclass
class TableInfo:
    """What the STF runner needs about a table, read from P4Info."""

    name: str
    fields: list[p4i.MatchField]
    actions: dict[str, list[p4i.Action.Param]]


def table_infos(info: p4i.P4Info) -> dict[str, TableInfo]:
    actions = {a.preamble.id: a for a in info.actions}
    result = {}
    for table in info.tables:
        refs = {
            actions[r.id].preamble.name: list(actions[r.id].params)
            for r in table.action_refs
            if r.id in actions
        }
        result[table.preamble.name] = TableInfo(table.preamble.name, list(table.match_fields), refs)
    return result


# --------------------------------------------------------------------------- running


@dataclass
class PortDiff:
    """Expected and received packets on one port that disagree."""

    port: int
    expected: list[ExpectStmt]
    received: list[bytes]


@dataclass
class StfResult:
    diffs: list[PortDiff] = field(default_factory=list)
    check_failures: list[str] = field(default_factory=list)
    ignored: list[tuple[int, bytes]] = field(default_factory=list)
    log: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.diffs and not self.check_failures


def pattern_matches(stmt: ExpectStmt, data: bytes) -> bool:
    if stmt.pattern is None:
        return True
    got = data.hex().upper()
    if len(got) < len(stmt.pattern) or (stmt.exact and len(got) != len(stmt.pattern)):
        return False
    return all(e == "*" or e == g for e, g in zip(stmt.pattern, got, strict=False))


def bind_action(table: TableInfo, name: str, args: list[tuple[str, str]]
                ) -> tuple[str, list[int]]:
    """The action of `table` called `name` (or a suffix of it) and its parameter values from
    the STF's `name:value` arguments (ValueError: unknown or missing argument)."""
    action = by_name_or_suffix(list(table.actions), name, f"action of table {table.name}")
    params = table.actions[action]
    given = dict(args)
    unknown = set(given) - {p.name for p in params}
    if unknown:
        raise ValueError(f"action {action} has no parameter '{sorted(unknown)[0]}'")
    missing = [p.name for p in params if p.name not in given]
    if missing:
        raise ValueError(f"action {action}: missing argument '{missing[0]}'")
    return action, [parse_int(given[p.name], p.bitwidth) for p in params]


class StfRunner:
    """Executes STF statements against a loaded pipeline (lgkit.sw.exec.pipeline.Pipeline)."""

    def __init__(self, pipeline: Pipeline, info: p4i.P4Info, filename: str = "<stf>") -> None:
        self.pipeline = pipeline
        self.run_packet = pipeline.arch.run_untimed
        self.tables = table_infos(standard_view(info))
        self.filename = filename
        self.result = StfResult()
        self.received: dict[int, list[bytes]] = {}
        self.nodes: list[tuple[int, list[int]]] = []
        self.group_nodes: dict[int, list[int]] = {}
        self.mc_clones: dict[int, int] = {}
        self.added = 0
        self.ports: set[int] = set()

    def run(self, stmts: list[Stmt]) -> StfResult:
        self.ports = {s.port for s in stmts if isinstance(s, PacketStmt | ExpectStmt)}
        for stmt in stmts:
            try:
                self.execute(stmt)
            except (ValueError, KeyError, IndexError) as exc:
                message = exc.args[0] if exc.args else type(exc).__name__
                raise StfError(self.filename, stmt.line, str(message)) from None
        self.compare([s for s in stmts if isinstance(s, ExpectStmt)])
        return self.result

    def execute(self, stmt: Stmt) -> None:
        if isinstance(stmt, PacketStmt):
            self.refresh_clone_groups()
            self.collect(self.run_packet(self.pipeline, stmt.port, stmt.data))
        elif isinstance(stmt, CommandStmt) and stmt.keyword in ARCH_USAGE:
            self.refresh_clone_groups()
            self.collect(self.pipeline.arch.command(self.pipeline, stmt.keyword, stmt.words))
        elif isinstance(stmt, AddStmt):
            self.add_entry(stmt)
        elif isinstance(stmt, SetDefaultStmt):
            table = self.table(stmt.table)
            action, params = bind_action(table, stmt.action, stmt.args)
            self.pipeline.tables[table.name].set_default(action, params)
        elif isinstance(stmt, CommandStmt):
            handler = getattr(self, "do_" + stmt.keyword)
            handler(stmt)

    def collect(self, outputs: list[tuple[int, bytes]]) -> None:
        """Transmitted packets: to their port's expectations, or ignored (no expect names it)."""
        for port, data in outputs:
            if port in self.ports:
                self.received.setdefault(port, []).append(data)
            else:
                self.result.ignored.append((port, data))

    # ----------------------------------------------------------------- tables

    def table(self, name: str) -> TableInfo:
        return self.tables[by_name_or_suffix(list(self.tables), name, "table")]

    def add_entry(self, stmt: AddStmt) -> None:
        from lgkit.sw.exec import pipeline as pl

        table = self.table(stmt.table)
        matches, priority = self.match(table, stmt.keys, stmt.priority)
        action, params = bind_action(table, stmt.action, stmt.args)
        entry = pl.TableEntry(matches, action, params, priority)
        self.pipeline.tables[table.name].insert(entry)

    def match(self, table: TableInfo, keys: list[tuple[str, str]], priority: int | None
              ) -> tuple[list[KeyMatch | None], int]:
        """The key matches and priority of an entry added now (the first added wins)."""
        names = [f.name for f in table.fields]
        given = {key_field_name(names, key): value for key, value in keys}
        matches = [self.key_match(f, given.get(f.name)) for f in table.fields]
        self.added += 1
        if priority is None and self.needs_priority(table):
            priority = IMPLICIT_PRIORITY_BASE - self.added
        return matches, priority or 0

    # ----------------------------------------------------------------- action profiles
    # simple_switch_CLI's commands; members and groups get BMv2's handles (lowest free).

    def profile(self, name: str) -> ActionProfile:
        return by_name(self.pipeline.action_profiles, name, "action profile")

    def do_act_prof_create_member(self, stmt: CommandStmt) -> None:
        profile = self.profile(stmt.words[0])
        if not profile.tables:
            raise ValueError(f"action profile {profile.name} is used by no table")
        name, args = parse_action(stmt.words[1])
        action, params = bind_action(self.table(profile.tables[0].name), name, args)
        profile.add_member(profile.free_handle(), action, params)

    def do_act_prof_create_group(self, stmt: CommandStmt) -> None:
        profile = self.profile(stmt.words[0])
        group = next(g for g in range(len(profile.groups) + 1) if g not in profile.groups)
        profile.set_group(group, {}, insert=True)

    def do_act_prof_add_member_to_group(self, stmt: CommandStmt) -> None:
        profile = self.profile(stmt.words[0])
        member, group = parse_int(stmt.words[1]), parse_int(stmt.words[2])
        if group not in profile.groups:
            raise ValueError(f"{profile.name}: no group {group}")
        members = dict(profile.groups[group].members)
        if member in members:
            raise ValueError(f"{profile.name}: member {member} is in group {group} already")
        profile.set_group(group, {**members, member: 1})

    def do_table_indirect_add(self, stmt: CommandStmt) -> None:
        self.indirect_add(stmt, group=False)

    def do_table_indirect_add_with_group(self, stmt: CommandStmt) -> None:
        self.indirect_add(stmt, group=True)

    def indirect_add(self, stmt: CommandStmt, group: bool) -> None:
        from lgkit.sw.exec import pipeline as pl

        table_name, priority, keys, handle = parse_indirect_add(stmt.words)
        table = self.table(table_name)
        matches, prio = self.match(table, keys, priority)
        member, group_id = (None, handle) if group else (handle, None)
        self.pipeline.tables[table.name].insert(
            pl.TableEntry(matches, "", [], prio, member=member, group=group_id))

    @staticmethod
    def needs_priority(table: TableInfo) -> bool:
        kinds = {p4i.MatchField.TERNARY, p4i.MatchField.RANGE, p4i.MatchField.OPTIONAL}
        return any(f.match_type in kinds for f in table.fields)

    @staticmethod
    def key_match(f: p4i.MatchField, text: str | None) -> KeyMatch | None:
        from lgkit.sw.exec import pipeline as pl

        width = f.bitwidth
        kind = f.match_type
        if kind == p4i.MatchField.EXACT:
            return pl.Exact(parse_int(text if text is not None else "0", width))
        if kind == p4i.MatchField.LPM:
            value, length = lpm_value(text, width) if text is not None else (0, 0)
            return pl.Lpm(value, length)
        if text is None:
            return None
        if kind == p4i.MatchField.TERNARY:
            value, mask = ternary_value(text, width)
            return pl.Ternary(value, mask)
        if kind == p4i.MatchField.RANGE:
            return pl.Range(*range_value(text, width))
        if kind == p4i.MatchField.OPTIONAL:
            return pl.Optional_(parse_int(text, width))
        raise ValueError(f"match kind of key '{f.name}' is not supported by STF")

    # ----------------------------------------------------------------- multicast / clone

    def do_mirroring_add(self, stmt: CommandStmt) -> None:
        session, port = (parse_int(w) for w in stmt.words)
        self.mc_clones.pop(session, None)
        self.pipeline.clone_sessions[session] = [(port, 0)]

    def do_mirroring_add_mc(self, stmt: CommandStmt) -> None:
        session, mgid = (parse_int(w) for w in stmt.words)
        self.mc_clones[session] = mgid

    def refresh_clone_groups(self) -> None:
        for session, mgid in self.mc_clones.items():
            replicas = self.pipeline.mc_groups.get(mgid, [])
            self.pipeline.clone_sessions[session] = [(port, rid) for rid, port in replicas]

    def do_mc_mgrp_create(self, stmt: CommandStmt) -> None:
        mgid = parse_int(stmt.words[0])
        self.group_nodes[mgid] = []
        self.pipeline.mc_groups[mgid] = []

    def do_mc_node_create(self, stmt: CommandStmt) -> None:
        rid, *ports = (parse_int(w) for w in stmt.words)
        self.nodes.append((rid, sorted(set(ports))))
        self.result.log.append(f"node handle {len(self.nodes) - 1}: rid {rid} ports {ports}")

    def do_mc_node_associate(self, stmt: CommandStmt) -> None:
        mgid, handle = (parse_int(w) for w in stmt.words)
        if mgid not in self.group_nodes:
            raise ValueError(f"multicast group {mgid} was not created")
        if not 0 <= handle < len(self.nodes):
            raise ValueError(f"no multicast node with handle {handle}")
        self.group_nodes[mgid].append(handle)
        self.pipeline.mc_groups[mgid] = [
            (self.nodes[h][0], port) for h in self.group_nodes[mgid] for port in self.nodes[h][1]
        ]

    # ----------------------------------------------------------------- externs

    def register(self, name: str) -> RegisterArray:
        return by_name(self.pipeline.registers, name, "register")

    def counter(self, name: str) -> CounterArray:
        return by_name(self.pipeline.counters, name, "counter")

    def meter(self, name: str) -> MeterArray:
        return by_name(self.pipeline.meters, name, "meter")

    @staticmethod
    def index(array: ExternArray, text: str, name: str) -> int:
        """An extern array index, checked against the array's size (as BMv2's CLI does)."""
        index = parse_int(text)
        size = array.size
        if not 0 <= index < size:
            raise ValueError(f"index {index} out of range for {name} (size {size})")
        return index

    def check(self, what: str, actual: int, op: str, expected_text: str, line: int) -> None:
        if op not in COMPARE:
            raise ValueError(f"unknown comparison '{op}'")
        expected = parse_int(expected_text)
        if not COMPARE[op](actual, expected):
            self.result.check_failures.append(
                f"{self.filename}:{line}: {what} is {actual}, expected {op} {expected}"
            )

    def do_counter_read(self, stmt: CommandStmt) -> None:
        name, index_text, *check = stmt.words
        counter = self.counter(name)
        packets, nbytes = counter.read(self.index(counter, index_text, name))
        self.result.log.append(f"{name}[{index_text}] = {packets} packets, {nbytes} bytes")
        if check:
            if len(check) != 3 or check[0] not in ("packets", "bytes"):
                raise ValueError(f"counter_read: expected {usage_of('counter_read')}")
            actual = packets if check[0] == "packets" else nbytes
            self.check(f"{name}[{index_text}].{check[0]}", actual, check[1], check[2], stmt.line)

    def do_check_counter(self, stmt: CommandStmt) -> None:
        match = re.fullmatch(r"([^(\s]+)\((\w+)\)", stmt.words[0])
        if not match:
            raise ValueError(f"check_counter: expected {usage_of('check_counter')}")
        name = match.group(1)
        counter = self.counter(name)
        index = self.index(counter, match.group(2), name)
        rest = stmt.words[1:]
        kind = rest.pop(0) if rest[0] in ("packets", "bytes") else "packets"
        if len(rest) != 2:
            raise ValueError(f"check_counter: expected {usage_of('check_counter')}")
        packets, nbytes = counter.read(index)
        actual = packets if kind == "packets" else nbytes
        self.check(f"{name}[{index}].{kind}", actual, rest[0], rest[1], stmt.line)

    def do_counter_write(self, stmt: CommandStmt) -> None:
        name, index, packets, nbytes = stmt.words
        counter = self.counter(name)
        counter.write(self.index(counter, index, name), parse_int(packets), parse_int(nbytes))

    def do_register_read(self, stmt: CommandStmt) -> None:
        name, index_text, *check = stmt.words
        register = self.register(name)
        value = register.read(self.index(register, index_text, name))
        self.result.log.append(f"{name}[{index_text}] = {value}")
        if check:
            if len(check) != 2:
                raise ValueError(f"register_read: expected {usage_of('register_read')}")
            self.check(f"{name}[{index_text}]", value, check[0], check[1], stmt.line)

    def do_register_write(self, stmt: CommandStmt) -> None:
        name, index, value = stmt.words
        register = self.register(name)
        register.write(self.index(register, index, name), parse_int(value, register.width))

    def do_register_reset(self, stmt: CommandStmt) -> None:
        register = self.register(stmt.words[0])
        for index in range(register.size):
            register.write(index, 0)

    def do_meter_set_rates(self, stmt: CommandStmt) -> None:
        name, index, *rates = stmt.words
        self.set_meter(name, [self.index(self.meter(name), index, name)], rates)

    def do_meter_array_set_rates(self, stmt: CommandStmt) -> None:
        name, *rates = stmt.words
        meter = self.meter(name)
        self.set_meter(name, list(range(meter.size)), rates)

    def set_meter(self, name: str, indices: list[int], rates: list[str]) -> None:
        """BMv2's CLI gives rates in units per microsecond; MeterArray takes units per second."""
        pairs = []
        for rate in rates:
            value, sep, burst = rate.partition(":")
            if not sep:
                raise ValueError(f"meter rate '{rate}' is not RATE:BURST")
            pairs.append((float(value) * 1e6, parse_int(burst)))
        if len(pairs) == 1:
            pairs.append(pairs[0])
        meter = self.meter(name)
        for index in indices:
            # STF rates may be fractional per µs; the meter computes in floats (TrTcm.mark)
            meter.set_rates(index, pairs[0], pairs[1])  # type: ignore[arg-type]

    def do_wait(self, stmt: CommandStmt) -> None:
        """Packets are processed to completion as they are sent: `wait` alone has nothing to
        wait for; `wait DURATION` lets that much virtual time pass."""
        if stmt.words:
            self.refresh_clone_groups()
            self.collect(self.pipeline.arch.advance(self.pipeline,
                                                    parse_duration(stmt.words[0])))

    # ----------------------------------------------------------------- comparison

    def compare(self, expects: list[ExpectStmt]) -> None:
        self.result.diffs.extend(expect_diffs(expects, self.received))


def expect_diffs(expects: list[ExpectStmt], received: dict[int, list[bytes]]) -> list[PortDiff]:
    """Per port: the packets must match the expects in order and in number. As in p4c's
    runner, a port named by an `expect PORT` without data is not checked at all."""
    wanted: dict[int, list[ExpectStmt]] = {}
    unchecked = {stmt.port for stmt in expects if stmt.pattern is None}
    for stmt in expects:
        wanted.setdefault(stmt.port, []).append(stmt)
    diffs = []
    for port in sorted((set(wanted) | set(received)) - unchecked):
        exp, got = wanted.get(port, []), received.get(port, [])
        ok = len(exp) == len(got) and all(
            pattern_matches(e, g) for e, g in zip(exp, got, strict=True)
        )
        if not ok:
            diffs.append(PortDiff(port, exp, got))
    return diffs


# --------------------------------------------------------------------------- reporting


def marker(pattern: str, got: str) -> str:
    """A line of '^' under the nibbles where `got` differs from `pattern`."""
    marks = []
    for i in range(max(len(pattern), len(got))):
        e = pattern[i] if i < len(pattern) else None
        g = got[i] if i < len(got) else None
        marks.append(" " if e == "*" or (e is not None and e == g) or e is None else "^")
    return "".join(marks).rstrip()


def format_diff(diff: PortDiff) -> list[str]:
    lines = [f"port {diff.port}: expected {len(diff.expected)} packet(s), got {len(diff.received)}"]
    for i in range(max(len(diff.expected), len(diff.received))):
        exp = diff.expected[i] if i < len(diff.expected) else None
        got = diff.received[i].hex().upper() if i < len(diff.received) else None
        if exp is not None and got is not None and pattern_matches(exp, diff.received[i]):
            lines.append(f"  #{i} ok (line {exp.line})")
            continue
        if exp is None:
            lines.append(f"  #{i} unexpected: {got}")
            continue
        shown = "<any packet>" if exp.pattern is None else exp.pattern + ("$" if exp.exact else "")
        lines.append(f"  #{i} expected:   {shown}  (line {exp.line})")
        if got is None:
            lines.append(f"  #{i} received:   <nothing>")
            continue
        lines.append(f"  #{i} received:   {got}")
        if exp.pattern is not None:
            lines.append(f"               {marker(exp.pattern, got)}")
            if exp.exact and len(got) != len(exp.pattern):
                want = len(exp.pattern) // 2
                lines.append(f"      length {len(got) // 2} bytes, expected {want}")
    return lines


def format_result(result: StfResult) -> str:
    lines: list[str] = []
    for diff in result.diffs:
        lines.extend(format_diff(diff))
    lines.extend(result.check_failures)
    return "\n".join(lines)
