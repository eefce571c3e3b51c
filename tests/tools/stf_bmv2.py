"""Replay an STF file on real BMv2, one packet at a time: each `packet` runs on a fresh
simple_switch that got every table and register command before it, and its outputs are
compared with the `expect`s that follow it. Unlike `lgkit stf --target bmv2` (commands before
the first packet only), this replays files that write registers between packets, for packets
that each leave the switch before the next arrives; counters and register reads are left to the
built-in target's runner. Commands are translated by the kit's BMv2 STF driver."""

from __future__ import annotations

from pathlib import Path

from lgkit.sw.tools.bmv2_stf import Bmv2Cli, compile_bmv2
from lgkit.sw.tools.stf import (
    CommandStmt,
    ExpectStmt,
    PacketStmt,
    Stmt,
    parse_stf,
    pattern_matches,
)
from tools import bmv2

REPLAYED = ("register_write", "mirroring_add")
START_DELAY_S = 4
"""Packets enter this long after the switch starts: the table commands come first even on a busy
machine (at 1 s they sometimes did not, and the packet met empty tables)."""


def expects_after(stmts: list[Stmt], index: int) -> list[ExpectStmt]:
    """The expects between the packet at `index` and the next packet."""
    expects = []
    for later in stmts[index + 1:]:
        if isinstance(later, PacketStmt):
            break
        if isinstance(later, ExpectStmt):
            expects.append(later)
    return expects


def replay(program: Path, stf: Path, work: Path, priority_queues: int = 1) -> list[str]:
    """Differences between BMv2's outputs and the STF's expects (empty: all matched)."""
    json_path, info = compile_bmv2(program, work)
    translate = Bmv2Cli(info)
    commands: list[str] = []
    problems: list[str] = []
    stmts = parse_stf(stf.read_text(), str(stf))
    ports = tuple(sorted({s.port for s in stmts if isinstance(s, PacketStmt | ExpectStmt)}))
    for index, stmt in enumerate(stmts):
        if isinstance(stmt, PacketStmt):
            expects = expects_after(stmts, index)
            out = bmv2.run(json_path, [(stmt.port, stmt.data)], tuple(commands),
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
        elif not isinstance(stmt, ExpectStmt) and (
                not isinstance(stmt, CommandStmt) or stmt.keyword in REPLAYED):
            line = translate.command(stmt)
            if line is not None:
                commands.append(line)
    return problems
