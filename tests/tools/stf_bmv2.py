"""Replay an STF file on real BMv2, one packet at a time: each `packet` runs on a fresh
simple_switch that got every table and register command before it, and its outputs are
compared with the `expect`s that follow it. This matches STF files whose packets each leave
the switch before the next arrives (registers back where the commands put them); counters and
register reads are left to the built-in target's runner."""

from __future__ import annotations

from pathlib import Path

from lgkit.sw.tools.stf import (
    AddStmt,
    CommandStmt,
    ExpectStmt,
    PacketStmt,
    SetDefaultStmt,
    parse_stf,
    pattern_matches,
)
from tools import bmv2

REPLAYED = ("register_write", "mirroring_add")
START_DELAY_S = 4
"""Packets enter this long after the switch starts: the table commands come first even on a busy
machine (at 1 s they sometimes did not, and the packet met empty tables)."""


def cli_line(stmt: AddStmt | SetDefaultStmt | CommandStmt) -> str | None:
    """The simple_switch_CLI command of a control statement (None: not replayed)."""
    if isinstance(stmt, SetDefaultStmt):
        return " ".join(["table_set_default", stmt.table, stmt.action,
                         *[value for _, value in stmt.args]])
    if isinstance(stmt, AddStmt):
        line = ["table_add", stmt.table, stmt.action, *[value for _, value in stmt.keys], "=>",
                *[value for _, value in stmt.args]]
        if stmt.priority is not None:
            line.append(str(stmt.priority))
        return " ".join(line)
    if stmt.keyword in REPLAYED:
        return " ".join([stmt.keyword, *stmt.words])
    return None


def replay(program_json: Path, stf: Path, priority_queues: int = 1) -> list[str]:
    """Differences between BMv2's outputs and the STF's expects (empty: all matched)."""
    commands: list[str] = []
    problems: list[str] = []
    stmts = parse_stf(stf.read_text(), str(stf))
    ports = tuple(sorted({s.port for s in stmts if isinstance(s, PacketStmt | ExpectStmt)}))
    for index, stmt in enumerate(stmts):
        if isinstance(stmt, PacketStmt):
            expects = []
            for later in stmts[index + 1:]:
                if isinstance(later, PacketStmt):
                    break
                if isinstance(later, ExpectStmt):
                    expects.append(later)
            out = bmv2.run(program_json, [(stmt.port, stmt.data)], tuple(commands),
                           expected_outputs=len(expects), timeout=10, ports=ports,
                           priority_queues=priority_queues, start_delay_s=START_DELAY_S)
            sent = [(port, data) for port, frames in out.items() for data in frames]
            if len(sent) != len(expects):
                problems.append(f"line {stmt.line}: {len(sent)} packets out, expected "
                                f"{len(expects)}")
            for want in expects:
                if not any(port == want.port and pattern_matches(want, data)
                           for port, data in sent):
                    problems.append(f"line {want.line}: nothing on port {want.port} matches")
        elif not isinstance(stmt, ExpectStmt):
            line = cli_line(stmt)
            if line is not None:
                commands.append(line)
    return problems
