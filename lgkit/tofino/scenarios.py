"""LinkGuardian STF scenarios written once, run on any program through its binding file.

The scenarios (tests/lg_stf/*.stf) are plain STF for p4/linkguardian.p4, the reference: BMv2
and `lgkit stf` run them as they are. Another program gets them through a binding, the JSON
file beside it (PROG.stf.json), which names what the scenarios' names are in that program:

  "tag"        the word the scenarios' `#!` lines use for it (e.g. "tofino")
  "tables"     scenario table -> {"to": its table, "keys": {key: its key}, "actions": {action:
               its action in this table}} or {"none": why}
  "actions"    scenario action -> its action
  "registers"  scenario register -> {"to": its register, "shift": left shift of values} or
               {"to": [added, removed], "field": N} (the difference of field N of two struct
               registers) or {"none": why}
  "counters"   scenario counter -> its counter, or {"none": why}
  "value_sets" parser value set -> its members (the control plane's set-up; STF has no command)
  "port_session_max_len"  the max_pkt_len the control plane gives each port session (the
               `port_session` of the scenario's lg_set_port entries; STF cannot say it)
  "port_session_queue"  the lg_set_global parameter whose value the control plane gives each
               port session as the queue of its copies
  "pfc_session_offset"  the program's second session of a port (PFC frames) is port_session
               + this: the scenario's `mirroring_add` of a port session gets a twin, cut the
               same way, in queue 0

A behaviour that truly differs is written in the scenario, in one place, with its reason:
  `#! TAG: STATEMENT`           a statement only for the program tagged TAG (a comment elsewhere)
  `STATEMENT #! not TAG: WHY`   a statement every program but TAG's runs
  `#! skip TAG: WHY`            the scenario does not run on TAG's program
A check the binding drops (`none`) is reported as a note with the binding's reason."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from lgkit.sw.exec.interp.tables import Exact
from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.p4info import build_p4info
from lgkit.sw.tools.stf import (
    AddStmt,
    CommandStmt,
    SetDefaultStmt,
    StfError,
    StfResult,
    StfRunner,
    Stmt,
    parse_stf,
)

DIRECTIVE = re.compile(r"#!\s*(?:(?P<skip>skip|not)\s+)?(?P<tag>[\w-]+):\s*(?P<text>.*)$")
REGISTER_WORDS = {"register_read", "register_write", "register_reset"}
COUNTER_WORDS = {"counter_read", "counter_write"}


class BindingError(ValueError):
    """A binding file that cannot be read or does not describe a binding."""


@dataclass
class Binding:
    """A program's names for the scenarios' tables, actions, registers and counters."""

    tag: str
    tables: dict[str, Any] = field(default_factory=dict)
    actions: dict[str, str] = field(default_factory=dict)
    registers: dict[str, Any] = field(default_factory=dict)
    counters: dict[str, Any] = field(default_factory=dict)
    value_sets: dict[str, list[int]] = field(default_factory=dict)
    port_session_max_len: int = 0
    port_session_queue: str = ""
    pfc_session_offset: int = 0


REFERENCE = Binding(tag="v1model")  # the scenarios' own names: nothing to rename


def binding_path(program: Path) -> Path:
    return program.with_suffix(".stf.json")


def load_binding(program: Path) -> Binding:
    """PROG.stf.json's binding, or the reference's (no renaming) when there is none."""
    path = binding_path(program)
    if not path.is_file():
        return REFERENCE
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return Binding(
            tag=str(raw["tag"]), tables=raw.get("tables", {}), actions=raw.get("actions", {}),
            registers=raw.get("registers", {}), counters=raw.get("counters", {}),
            value_sets={k: [int(v) for v in vs] for k, vs in raw.get("value_sets", {}).items()},
            port_session_max_len=int(raw.get("port_session_max_len", 0)),
            port_session_queue=str(raw.get("port_session_queue", "")),
            pfc_session_offset=int(raw.get("pfc_session_offset", 0)))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise BindingError(f"{path}: not a scenario binding ({exc})") from None


@dataclass
class Scenario:
    """One scenario as a program runs it: its statements, or why it does not run."""

    path: Path
    stmts: list[Stmt]
    notes: list[str]
    skipped: str | None = None
    mirror_max_len: dict[int, int] = field(default_factory=dict)
    mirror_queue: dict[int, int] = field(default_factory=dict)


def select_lines(text: str, tag: str) -> tuple[str, str | None]:
    """The STF text for the program tagged `tag` (`#!` lines resolved; line numbers kept) and
    the reason the scenario is skipped for it, if it is."""
    lines, skipped = [], None
    for line in text.splitlines():
        match = DIRECTIVE.search(line)
        if match is None:
            lines.append(line)
            continue
        mine = match.group("tag") == tag
        before = line[:match.start()]
        if match.group("skip") == "skip" and mine:
            skipped = match.group("text").strip()
        if match.group("skip") == "not":
            lines.append("" if mine else before)
        elif match.group("skip") is None and mine and not before.strip():
            lines.append(match.group("text"))
        else:
            lines.append(before)
    return "\n".join(lines), skipped


def bind_scenario(path: Path, binding: Binding) -> Scenario:
    text, skipped = select_lines(path.read_text(encoding="utf-8"), binding.tag)
    if skipped:
        return Scenario(path, [], [], skipped)
    stmts = parse_stf(text, str(path))
    notes: list[str] = []
    bound = [b for s in stmts if (b := bind_stmt(s, binding, notes)) is not None]
    sessions = {int(v, 0) for s in stmts if isinstance(s, AddStmt)
                for k, v in s.args if k == "port_session"} - {0}
    offset = binding.pfc_session_offset
    if offset:
        bound = [t for s in bound for t in _with_pfc_twin(s, sessions, offset)]
    cut = binding.port_session_max_len
    truncated = {x: cut for s in sessions for x in {s, s + offset}} if cut else {}
    queue = binding.port_session_queue
    queues = dict.fromkeys(sessions, _global_arg(stmts, queue)) if queue else {}
    return Scenario(path, bound, notes, skipped, truncated, queues)


def _with_pfc_twin(stmt: Stmt, sessions: set[int], offset: int) -> list[Stmt]:
    """`stmt`, and after a port session's `mirroring_add` its PFC session's (id + offset)."""
    if not (isinstance(stmt, CommandStmt) and stmt.keyword == "mirroring_add"
            and int(stmt.words[0], 0) in sessions):
        return [stmt]
    return [stmt, replace(stmt, words=[str(int(stmt.words[0], 0) + offset), *stmt.words[1:]])]


def _global_arg(stmts: list[Stmt], name: str) -> int:
    """The value of lg_set_global's argument `name` in the scenario (0 when it has none)."""
    values = [int(v, 0) for s in stmts if isinstance(s, SetDefaultStmt)
              and s.action.endswith("lg_set_global") for k, v in s.args if k == name]
    return values[0] if values else 0


def _dropped(entry: Any, what: str, notes: list[str]) -> bool:
    if isinstance(entry, dict) and "none" in entry:
        note = f"not in this program: {what}: {entry['none']}"
        if note not in notes:
            notes.append(note)
        return True
    return False


def bind_stmt(stmt: Stmt, b: Binding, notes: list[str]) -> Stmt | None:
    """`stmt` under the program's names (None: the binding says the program has no such thing)."""
    if isinstance(stmt, AddStmt | SetDefaultStmt):
        entry = b.tables.get(stmt.table, {})
        if _dropped(entry, f"table {stmt.table}", notes):
            return None
        action = {**b.actions, **entry.get("actions", {})}.get(stmt.action, stmt.action)
        table = entry.get("to", stmt.table)
        if isinstance(stmt, SetDefaultStmt):
            return replace(stmt, table=table, action=action)
        keys = [(entry.get("keys", {}).get(k, k), v) for k, v in stmt.keys]
        return replace(stmt, table=table, action=action, keys=keys)
    if isinstance(stmt, CommandStmt) and stmt.keyword in COUNTER_WORDS | {"check_counter"}:
        return _bind_counter(stmt, b, notes)
    if isinstance(stmt, CommandStmt) and stmt.keyword in REGISTER_WORDS:
        entry = b.registers.get(stmt.words[0])
        if entry is None or _dropped(entry, f"register {stmt.words[0]}", notes):
            return None if entry is not None else stmt
        return RegisterStmt(stmt.line, stmt.keyword, stmt.words, entry)
    return stmt


def _bind_counter(stmt: CommandStmt, b: Binding, notes: list[str]) -> Stmt | None:
    name = stmt.words[0].split("(")[0]
    entry = b.counters.get(name)
    if entry is None:
        return stmt
    if _dropped(entry, f"counter {name}", notes):
        return None
    return replace(stmt, words=[stmt.words[0].replace(name, entry, 1), *stmt.words[1:]])


@dataclass
class RegisterStmt(CommandStmt):
    """A register statement whose value the program keeps another way (shifted, or as the
    difference of two struct registers' fields)."""

    bound: dict[str, Any] = field(default_factory=dict)


class BoundRunner(StfRunner):
    """The STF runner with the binding's register values."""

    def do_register_write(self, stmt: CommandStmt) -> None:
        if not isinstance(stmt, RegisterStmt):
            super().do_register_write(stmt)
            return
        to, shift = stmt.bound["to"], int(stmt.bound.get("shift", 0))
        value = int(stmt.words[2], 0) << shift
        super().do_register_write(replace(stmt, words=[to, stmt.words[1], str(value)]))

    def do_register_read(self, stmt: CommandStmt) -> None:
        if not isinstance(stmt, RegisterStmt):
            super().do_register_read(stmt)
            return
        self.read_bound(stmt, stmt.bound["to"], int(stmt.bound.get("shift", 0)))

    def do_register_reset(self, stmt: CommandStmt) -> None:
        if isinstance(stmt, RegisterStmt):
            raise ValueError(f"register_reset of {stmt.words[0]}: not bound (read or write it)")
        super().do_register_reset(stmt)

    def read_bound(self, stmt: RegisterStmt, to: str | list[str], shift: int) -> None:
        name, index_text, *check = stmt.words
        index = int(index_text, 0)
        if isinstance(to, str):
            value = self.register(to).read(index) >> shift
        else:
            added, removed = (self.field(r, index, stmt.bound["field"]) for r in to)
            value = (added - removed) & 0xFFFFFFFF
        self.result.log.append(f"{name}[{index_text}] = {value}")
        if check:
            self.check(f"{name}[{index_text}]", value, check[0], check[1], stmt.line)

    def field(self, name: str, index: int, member: int) -> int:
        register = self.pipeline.struct_registers.get(name)
        if register is None:
            raise ValueError(f"unknown struct register '{name}'")
        return register.read(index)[member]


def prepare(pipeline: Pipeline, binding: Binding, scenario: Scenario) -> None:
    """The control plane's set-up the binding names and STF cannot express."""
    for name, members in binding.value_sets.items():
        pipeline.value_sets[name].set_members([[Exact(m)] for m in members])
    pipeline.mirror_max_len.update(scenario.mirror_max_len)
    pipeline.mirror_queue.update(scenario.mirror_queue)


def run_scenario(compiled: Any, scenario: Scenario, binding: Binding) -> StfResult:
    """The bound scenario on a fresh pipeline of `compiled` (a frontend CompiledProgram)."""
    pipeline = Pipeline.load(compiled)
    prepare(pipeline, binding, scenario)
    runner = BoundRunner(pipeline, build_p4info(compiled.ir), str(scenario.path))
    return runner.run(scenario.stmts)


def scenario_files(paths: list[str]) -> list[Path]:
    """The .stf files named, and those in each directory named and its subfolders, in name order
    (ValueError: none)."""
    files: list[Path] = []
    for text in paths:
        path = Path(text)
        if path.is_dir():
            files += sorted(path.rglob("*.stf"))
        elif path.is_file():
            files.append(path)
        else:
            raise ValueError(f"{path}: no such file or directory")
    if not files:
        raise ValueError(f"no .stf file in {' '.join(paths)}")
    return files


def check_scenarios(compiled: Any, binding: Binding, files: list[Path]
                    ) -> tuple[list[str], list[str], bool]:
    """Each scenario's verdict line, the binding's notes (what was not checked, and why), and
    whether every scenario that ran passed."""
    lines: list[str] = []
    notes: dict[str, None] = {}
    ok = True
    for path in files:
        try:
            scenario = bind_scenario(path, binding)
            if scenario.skipped:
                lines.append(f"SKIP {path}: {scenario.skipped}")
                continue
            result = run_scenario(compiled, scenario, binding)
        except (StfError, OSError, UnicodeDecodeError, ValueError) as exc:
            lines.append(f"FAIL {path}: {exc}")
            ok = False
            continue
        notes.update(dict.fromkeys(scenario.notes))
        ok = ok and result.passed
        lines.append(("PASS " if result.passed else "FAIL ") + str(path))
        lines += [f"  {failure}" for failure in result.check_failures]
        lines += [f"  port {d.port}: expected {[e.pattern for e in d.expected]}, got "
                  f"{[p.hex().upper() for p in d.received]}" for d in result.diffs]
    return lines, list(notes), ok
