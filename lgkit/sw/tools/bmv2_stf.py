"""STF on BMv2 simple_switch, untimed, and the differential run: the same STF on the built-in
target and on BMv2, compared packet by packet, register by register.

BMv2 has no untimed mode, so the driver makes one: like p4c's STF runner it feeds packets
through named pipes (`simple_switch --use-files`), but one at a time, each after BMv2 has
finished with the previous one (its log stays quiet); afterwards the log proves that every
packet, with all its clones and recirculations, had left the switch before the next one came
in, or the run is refused.
Table entries, clone sessions and writes go through simple_switch_CLI before the first packet;
reads after the last one. A file that mixes them otherwise is not supported on BMv2.
`wait DURATION` sleeps that long between the packets (BMv2's clock is the wall's: at least
DURATION passes for it, exactly DURATION on the built-in target's virtual clock).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

from finsy.proto import p4i
from google.protobuf import text_format

from lgkit.sw.tools.stf import (
    COMPARE,
    AddStmt,
    CommandStmt,
    ExpectStmt,
    PacketStmt,
    SetDefaultStmt,
    StfError,
    StfResult,
    StfRunner,
    Stmt,
    TableInfo,
    bind_action,
    by_name_or_suffix,
    expect_diffs,
    format_result,
    key_field_name,
    lpm_value,
    parse_action,
    parse_duration,
    parse_indirect_add,
    parse_int,
    range_value,
    table_infos,
    ternary_value,
)

if TYPE_CHECKING:
    from lgkit.sw.exec.pipeline import Pipeline

TOOLS = ("p4c-bm2-ss", "simple_switch", "simple_switch_CLI")
DEFAULT_QUIET_S = 0.05
"A packet is done when BMv2's log has been quiet this long (the log then proves it) ..."
MAX_QUIET_S = 0.8
"... and when the log shows it was not, the run is repeated with twice the window, up to this."
PACKET_TIMEOUT_S = 30.0
READS = ("register_read", "counter_read", "check_counter")
WRITES = ("register_write", "register_reset", "counter_write", "mirroring_add",
          "mirroring_add_mc", "mc_mgrp_create", "mc_node_create", "mc_node_associate",
          "meter_set_rates", "meter_array_set_rates", "act_prof_create_member",
          "act_prof_create_group", "act_prof_add_member_to_group", "table_indirect_add",
          "table_indirect_add_with_group")
PRIORITY_QUEUES = 8
"""BMv2 drops a packet whose standard_metadata.priority has no queue; the built-in STF runner
has no traffic manager and takes every priority, so BMv2 runs with the most queues it has."""
BMV2_PRIORITY_BASE = 1 << 24
"""BMv2's CLI: the smaller priority wins; P4Runtime's (and our STF runner's): the larger.
An entry of priority p is given BASE - p."""
LOG_LINE = re.compile(r"^\[[\d:.]+\] \[bmv2\] \[\w\] \[thread \d+\] \[(\d+)\.(\d+)\] (.*)$")


class Bmv2Error(RuntimeError):
    """BMv2 could not run the test (tools, compiler, CLI, or the run was not untimed)."""


class NotUntimed(Bmv2Error):
    """BMv2 was still busy with a packet when the next one came in (a pause longer than the
    quiet window: the machine was busy)."""


def wait_s(stmt: Stmt) -> float:
    """The time an STF `wait DURATION` lets pass, in seconds (0 for any other statement)."""
    if isinstance(stmt, CommandStmt) and stmt.keyword == "wait" and stmt.words:
        return parse_duration(stmt.words[0]) / 1e9
    return 0.0


def missing_tools() -> list[str]:
    """BMv2/p4c programs the driver needs that are not on PATH."""
    return [tool for tool in TOOLS if shutil.which(tool) is None]


@dataclass(frozen=True)
class Probe:
    """A register or counter cell to read after the last packet (beyond the STF's reads)."""

    kind: str
    "register | counter"
    name: str
    index: int


@dataclass
class TargetRun:
    """What one target did with an STF."""

    received: dict[int, list[bytes]]
    "Per STF port, the packets sent out, in order."
    state: dict[str, int] = field(default_factory=dict)
    "Every value read: 'line N: reg[i]', 'line N: ctr[i].packets' (N = 0: the extra probes)."


def stf_ports(stmts: Iterable[Stmt]) -> list[int]:
    """The ports an STF sends on or expects on: the only ports that exist (as in p4c's runner)."""
    return sorted({s.port for s in stmts if isinstance(s, PacketStmt | ExpectStmt)})


def read_of(stmt: CommandStmt) -> tuple[str, str, int]:
    """(register | counter, name, index) of a read statement."""
    if stmt.keyword == "check_counter":
        name, _, index = stmt.words[0].rstrip(")").partition("(")
        return "counter", name, parse_int(index)
    kind = "register" if stmt.keyword == "register_read" else "counter"
    return kind, stmt.words[0], parse_int(stmt.words[1])


def probe_reads(probes: Iterable[Probe]) -> list[CommandStmt]:
    """The extra probes as read statements at line 0."""
    return [CommandStmt(0, f"{p.kind}_read", [p.name, str(p.index)]) for p in probes]


def record(state: dict[str, int], stmt: CommandStmt, values: list[int]) -> None:
    """Store a read's value(s) under the keys TargetRun.state documents."""
    kind, name, index = read_of(stmt)
    base = f"line {stmt.line}: {name}[{index}]"
    keys = [base] if kind == "register" else [base + ".packets", base + ".bytes"]
    state.update(zip(keys, values, strict=True))


def failed_checks(stmts: Iterable[Stmt], state: dict[str, int]) -> list[str]:
    """The STF's read expectations (register_read R I == V, ...) that `state` violates."""
    failures = []
    for stmt in stmts:
        if not (isinstance(stmt, CommandStmt) and stmt.keyword in READS):
            continue
        kind, name, index = read_of(stmt)
        check = stmt.words[1:] if stmt.keyword == "check_counter" else stmt.words[2:]
        if not check:
            continue
        field_name = ""
        if kind == "counter":
            field_name = check.pop(0) if check[0] in ("packets", "bytes") else "packets"
            field_name = "." + field_name
        key = f"line {stmt.line}: {name}[{index}]{field_name}"
        op, expected = check
        if not COMPARE[op](state[key], parse_int(expected)):
            failures.append(f"line {stmt.line}: {name}[{index}]{field_name} is {state[key]}, "
                            f"expected {op} {expected}")
    return failures


class RecordingRunner(StfRunner):
    """Our STF runner, keeping every value it reads."""

    def __init__(self, pipeline: Pipeline, info: p4i.P4Info) -> None:
        super().__init__(pipeline, info)
        self.state: dict[str, int] = {}

    def do_register_read(self, stmt: CommandStmt) -> None:
        super().do_register_read(stmt)
        _, name, index = read_of(stmt)
        record(self.state, stmt, [int(self.register(name).read(index))])

    def do_counter_read(self, stmt: CommandStmt) -> None:
        super().do_counter_read(stmt)
        self._counter(stmt)

    def do_check_counter(self, stmt: CommandStmt) -> None:
        super().do_check_counter(stmt)
        self._counter(stmt)

    def _counter(self, stmt: CommandStmt) -> None:
        _, name, index = read_of(stmt)
        record(self.state, stmt, [int(v) for v in self.counter(name).read(index)])


def run_builtin(pipeline: Pipeline, info: p4i.P4Info, stmts: list[Stmt],
                probes: Iterable[Probe] = ()) -> TargetRun:
    """The STF on the built-in target's untimed driver (the expects are not judged here)."""
    runner = RecordingRunner(pipeline, info)
    runner.run([*stmts, *probe_reads(probes)])
    received = {port: runner.received.get(port, []) for port in stf_ports(stmts)}
    return TargetRun(received, runner.state)


# --------------------------------------------------------------------------- BMv2


def compile_bmv2(program: Path, out: Path, includes: Iterable[str] = (),
                 defines: Iterable[str] = ()) -> tuple[Path, p4i.P4Info]:
    """p4c-bm2-ss: the BMv2 JSON and p4c's P4Info."""
    out.mkdir(parents=True, exist_ok=True)
    json_path, info_path = out / "program.json", out / "p4info.txtpb"
    argv = ["p4c-bm2-ss", *[f"-I{i}" for i in includes], *defines, "--p4runtime-files",
            str(info_path), "-o", str(json_path), str(program)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=300)
    if done.returncode != 0:
        raise Bmv2Error(f"p4c-bm2-ss rejects {program}:\n{done.stderr.strip()}")
    return json_path, text_format.Parse(info_path.read_text(), p4i.P4Info())


def free_tcp_port() -> int:
    """A port the kernel just handed out (for the switch's Thrift server)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def pcap_header() -> bytes:
    return struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)


def pcap_record(seconds: float, data: bytes) -> bytes:
    whole = int(seconds)
    return struct.pack("<IIII", whole, int((seconds - whole) * 1e6), len(data), len(data)) + data


def read_pcap(path: Path) -> list[bytes]:
    """The frames of a (microsecond, little-endian) pcap file; none if it is missing or empty."""
    raw = path.read_bytes() if path.exists() else b""
    frames, offset = [], 24
    while offset + 16 <= len(raw):
        length = struct.unpack_from("<IIII", raw, offset)[2]
        frames.append(raw[offset + 16: offset + 16 + length])
        offset += 16 + length
    return frames


class Bmv2Cli:
    """Translates STF statements into simple_switch_CLI commands (names from p4c's P4Info)."""

    def __init__(self, info: p4i.P4Info) -> None:
        self.info = info
        self.tables = table_infos(info)
        self.added = 0
        self.externs = {kind: [x.preamble.name for x in getattr(info, kind)]
                        for kind in ("registers", "counters", "meters", "action_profiles")}
        table_names = {t.preamble.id: t.preamble.name for t in info.tables}
        self.profile_tables = {p.preamble.name: [table_names[t] for t in p.table_ids]
                               for p in info.action_profiles}

    def command(self, stmt: Stmt) -> str | None:
        """The CLI line for a configuration statement (None: nothing to do)."""
        if isinstance(stmt, AddStmt):
            return self.table_add(stmt)
        if isinstance(stmt, SetDefaultStmt):
            table = self.table(stmt.table)
            action, params = self.action(table, stmt.action, stmt.args)
            return " ".join(["table_set_default", table.name, action, *map(str, params)])
        assert isinstance(stmt, CommandStmt)
        if stmt.keyword == "wait":
            return None
        words = list(stmt.words)
        if stmt.keyword.startswith(("act_prof_", "table_indirect_add")):
            return self.profile_command(stmt)
        if stmt.keyword in ("meter_set_rates", "meter_array_set_rates"):
            return " ".join([stmt.keyword, self.extern("meters", words[0]), *words[1:]])
        kind = {"register_write": "registers", "register_reset": "registers",
                "counter_write": "counters"}.get(stmt.keyword)
        if kind is not None:
            words[0] = self.extern(kind, words[0])
        numbers = [str(parse_int(w)) for w in words[1 if kind else 0:]]  # the CLI: decimal
        return " ".join([stmt.keyword, *words[:1 if kind else 0], *numbers])

    def table(self, name: str) -> TableInfo:
        return self.tables[by_name_or_suffix(list(self.tables), name, "table")]

    def profile_command(self, stmt: CommandStmt) -> str:
        """Action profile statements as BMv2's CLI takes them (same handles: 0, 1, ...)."""
        words = stmt.words
        if stmt.keyword.startswith("table_indirect_add"):
            name, priority, keys, handle = parse_indirect_add(words)
            table = self.table(name)
            given = {key_field_name([f.name for f in table.fields], k): v for k, v in keys}
            line = [stmt.keyword, table.name, *(self.key(f, given.get(f.name))
                                                for f in table.fields), "=>", str(handle)]
            return " ".join(line + self.priority(table, priority))
        profile = self.extern("action_profiles", words[0])
        if stmt.keyword == "act_prof_create_member":
            table = self.table(self.profile_tables[profile][0])
            action, params = self.action(table, *parse_action(words[1]))
            return " ".join([stmt.keyword, profile, action, *map(str, params)])
        return " ".join([stmt.keyword, profile, *(str(parse_int(w)) for w in words[1:])])

    def extern(self, kind: str, name: str) -> str:
        return by_name_or_suffix(self.externs[kind], name, kind[:-1])

    @staticmethod
    def action(table: TableInfo, name: str, args: list[tuple[str, str]]
               ) -> tuple[str, list[int]]:
        try:
            return bind_action(table, name, args)
        except ValueError as exc:
            raise Bmv2Error(str(exc)) from exc

    def table_add(self, stmt: AddStmt) -> str:
        table = self.table(stmt.table)
        names = [f.name for f in table.fields]
        given = {key_field_name(names, key): value for key, value in stmt.keys}
        keys = [self.key(f, given.get(f.name)) for f in table.fields]
        action, params = self.action(table, stmt.action, stmt.args)
        line = ["table_add", table.name, action, *keys, "=>", *map(str, params)]
        return " ".join(line + self.priority(table, stmt.priority))

    def priority(self, table: TableInfo, priority: int | None) -> list[str]:
        """The CLI's priority of an entry added now, if the table takes one."""
        self.added += 1
        kinds = {p4i.MatchField.TERNARY, p4i.MatchField.RANGE, p4i.MatchField.OPTIONAL}
        if not any(f.match_type in kinds for f in table.fields):
            return []
        if priority is None:
            priority = (1 << 24) - self.added  # as our runner: the first added wins
        return [str(BMV2_PRIORITY_BASE - priority)]

    @staticmethod
    def key(f: p4i.MatchField, text: str | None) -> str:
        width, kind = f.bitwidth, f.match_type
        if kind == p4i.MatchField.EXACT:
            return str(parse_int(text if text is not None else "0", width))
        if kind == p4i.MatchField.LPM:
            value, length = lpm_value(text, width) if text is not None else (0, 0)
            return f"{value}/{length}"
        if kind == p4i.MatchField.TERNARY:
            value, mask = ternary_value(text, width) if text is not None else (0, 0)
            return f"{value}&&&{mask}"
        if kind == p4i.MatchField.RANGE:
            low, high = range_value(text, width) if text is not None else (0, (1 << width) - 1)
            return f"{low}->{high}"
        if kind == p4i.MatchField.OPTIONAL:  # p4c gives BMv2 a ternary key
            return "0&&&0" if text is None else f"{parse_int(text, width)}&&&{(1 << width) - 1}"
        raise Bmv2Error(f"match kind of key '{f.name}' is not supported on BMv2's CLI")


def check_untimed(log: Path) -> None:
    """Every received packet (id N.0) and all its copies finished before the next arrived."""
    last_line: dict[int, int] = {}
    arrivals: list[tuple[int, int]] = []
    with log.open(errors="replace") as lines:
        for number, line in enumerate(lines):
            match = LOG_LINE.match(line)
            if match is None:
                continue
            packet, copy, text = int(match[1]), int(match[2]), match[3]
            last_line[packet] = number
            if copy == 0 and text.startswith("[cxt 0] Processing packet received"):
                arrivals.append((packet, number))
    for (packet, _), (following, start) in zip(arrivals, arrivals[1:], strict=False):
        if last_line[packet] > start:
            raise NotUntimed(f"not untimed: BMv2 was still working on packet {packet} when "
                             f"packet {following} arrived")


class LogWatch:
    """Follows BMv2's log (--log-flush) as it grows."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.arrivals = 0
        self.seen = 0

    def poll(self) -> bool:
        """Read what was added; True if anything was."""
        if not self.path.exists():
            return False
        with self.path.open("rb") as log:
            log.seek(self.offset)
            data = log.read()
        complete = data[: data.rfind(b"\n") + 1]
        self.offset += len(complete)
        for line in complete.decode(errors="replace").splitlines():
            match = LOG_LINE.match(line)
            if match and match[2] == "0" and "Processing packet received" in match[3]:
                self.arrivals += 1
        return bool(complete)

    def wait_for_arrival(self, switch: subprocess.Popen[str]) -> None:
        """Until BMv2 has taken in one more packet from its input files."""
        deadline = time.monotonic() + PACKET_TIMEOUT_S
        while self.arrivals <= self.seen:
            alive(switch)
            if time.monotonic() > deadline:
                raise Bmv2Error("BMv2 did not take in the next packet")
            if not self.poll():
                time.sleep(0.005)
        self.seen += 1

    def wait_until_quiet(self, switch: subprocess.Popen[str], quiet_s: float) -> None:
        """Until the log has not grown for quiet_s (a packet that loops forever: Bmv2Error)."""
        deadline = time.monotonic() + PACKET_TIMEOUT_S
        since = time.monotonic()
        while time.monotonic() - since < quiet_s:
            alive(switch)
            if time.monotonic() > deadline:
                raise Bmv2Error("BMv2 never went quiet (a packet loops forever?)")
            if self.poll():
                since = time.monotonic()
            else:
                time.sleep(0.005)


def alive(switch: subprocess.Popen[str]) -> None:
    """Bmv2Error if simple_switch has exited."""
    if switch.poll() is not None:
        reason = switch.stderr.read() if switch.stderr else ""
        raise Bmv2Error(f"simple_switch exited with status {switch.returncode} {reason}".strip())


class Inputs:
    """simple_switch's input pipes, fed one packet at a time. BMv2 merges its input files by
    time stamp, so it takes in a packet only once every file has a next record (or has
    ended): each pipe holds its port's next packet, and the port just served gets its next
    one (or its end) only when the driver is ready for the following packet."""

    def __init__(self, fifos: dict[int, int], stmts: list[Stmt]) -> None:
        self.fifos = fifos
        self.packets = [s for s in stmts if isinstance(s, PacketStmt)]
        self.pending = {port: deque(p for p in self.packets if p.port == port) for port in fifos}
        self.stamp = {id(p): number for number, p in enumerate(self.packets)}
        self.served: PacketStmt | None = None

    def _feed(self, port: int) -> None:
        queue = self.pending[port]
        if queue:
            os.write(self.fifos[port], pcap_record(self.stamp[id(queue[0])], queue[0].data))
        else:
            os.close(self.fifos.pop(port))

    def start(self) -> None:
        """Every pipe gets its first packet; BMv2 takes in the first of all."""
        for port in list(self.fifos):
            self._feed(port)
        self.served = self.packets[0]

    def advance(self) -> None:
        """BMv2 takes in the next packet."""
        assert self.served is not None
        port = self.served.port
        self.pending[port].popleft()
        self._feed(port)
        self.served = self.packets[self.packets.index(self.served) + 1]

    def finish(self) -> None:
        """Close every pipe (BMv2 then knows the input has ended)."""
        for fd in self.fifos.values():
            os.close(fd)
        self.fifos.clear()


class Bmv2StfRun:
    """One simple_switch process running one STF (see the module docstring)."""

    def __init__(self, json_path: Path, info: p4i.P4Info, work: Path,
                 quiet_s: float = DEFAULT_QUIET_S) -> None:
        self.json_path, self.info, self.work, self.quiet_s = json_path, info, work, quiet_s
        self.cli = Bmv2Cli(info)
        self.thrift = free_tcp_port()
        self.log = work / "bmv2.txt"

    def run(self, stmts: list[Stmt], probes: Iterable[Probe] = ()) -> TargetRun:
        """The STF, untimed: repeated with a longer quiet window while the log shows it was
        not (BMv2 paused longer than the window on a busy machine)."""
        probes = list(probes)
        while True:
            try:
                return self.run_once(stmts, probes)
            except NotUntimed:
                if self.quiet_s * 2 > MAX_QUIET_S:
                    raise
                self.quiet_s *= 2

    def run_once(self, stmts: list[Stmt], probes: Iterable[Probe] = ()) -> TargetRun:
        """Statements in order: packets one at a time, commands and reads between them."""
        ports = stf_ports(stmts)
        stmts = [*(s for s in stmts if not isinstance(s, ExpectStmt)), *probe_reads(probes)]
        for stmt in stmts:
            if isinstance(stmt, CommandStmt) and stmt.keyword not in WRITES + READS + ("wait",):
                raise Bmv2Error(f"line {stmt.line}: '{stmt.keyword}' is not supported on BMv2")
            if wait_s(stmt) > PACKET_TIMEOUT_S:
                raise Bmv2Error(f"line {stmt.line}: a wait longer than {PACKET_TIMEOUT_S:g} s "
                                "is not supported on BMv2 (its clock is the wall's)")
        self.work.mkdir(parents=True, exist_ok=True)
        self.log.unlink(missing_ok=True)
        for port in ports:
            fifo = self.work / f"pcap{port}_in.pcap"
            fifo.unlink(missing_ok=True)
            (self.work / f"pcap{port}_out.pcap").unlink(missing_ok=True)
            os.mkfifo(fifo)
        switch = subprocess.Popen(
            ["simple_switch", "--use-files", "0", "--thrift-port", str(self.thrift),
             # its own notifications socket: another simple_switch on the machine keeps the
             # default one (/tmp/bmv2-0-notifications.ipc)
             "--notifications-addr", f"ipc://{self.work.resolve()}/notifications.ipc",
             "--log-file", "bmv2", "--log-flush", "-L", "debug",
             *[arg for port in ports for arg in ("-i", f"{port}@pcap{port}")],
             str(self.json_path), "--", "--priority-queues", str(PRIORITY_QUEUES)],
            cwd=self.work, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            start_new_session=True)
        try:
            inputs = Inputs({port: self._open_fifo(self.work / f"pcap{port}_in.pcap", switch)
                             for port in ports}, stmts)
            self._wait_for_thrift(switch)
            state = self._execute(switch, inputs, stmts)
        finally:
            self._stop(switch)
        check_untimed(self.log)
        received = {port: read_pcap(self.work / f"pcap{port}_out.pcap") for port in ports}
        return TargetRun(received, state)

    def _execute(self, switch: subprocess.Popen[str], inputs: Inputs,
                 stmts: list[Stmt]) -> dict[str, int]:
        """Commands and reads go to the CLI in batches, each batch between two packets."""
        state: dict[str, int] = {}
        log = LogWatch(self.log)
        batch: list[Stmt] = []
        started = False
        for stmt in [*stmts, None]:
            if stmt is not None and not isinstance(stmt, PacketStmt):
                batch.append(stmt)
                continue
            self._run_batch(batch, state)
            batch = []
            if stmt is None:
                break
            if not started:
                inputs.start()
                started = True
            else:
                inputs.advance()
            log.wait_for_arrival(switch)
            log.wait_until_quiet(switch, self.quiet_s)
        inputs.finish()  # BMv2 writes its output files when the input has ended
        log.wait_until_quiet(switch, self.quiet_s)
        return state

    def _run_batch(self, batch: list[Stmt], state: dict[str, int]) -> None:
        reads = [s for s in batch if isinstance(s, CommandStmt) and s.keyword in READS]
        lines = [c for c in (self.cli.command(s) if s not in reads else self._read_line(s)
                             for s in batch) if c is not None]
        out = self._cli(lines)
        time.sleep(sum(wait_s(s) for s in batch))  # BMv2's clock is the wall's: at least as long
        registers = iter(re.findall(r"\]\s*=\s*(\d+)\s*$", out, re.M))
        counters = iter(re.findall(r"\((\d+) bytes, (\d+) packets\)", out))
        for stmt in reads:
            if read_of(stmt)[0] == "register":
                record(state, stmt, [int(next(registers))])
            else:
                nbytes, packets = next(counters)
                record(state, stmt, [int(packets), int(nbytes)])

    def _read_line(self, stmt: CommandStmt) -> str:
        kind, name, index = read_of(stmt)
        full = self.cli.extern("registers" if kind == "register" else "counters", name)
        return f"{kind}_read {full} {index}"

    @staticmethod
    def _open_fifo(path: Path, switch: subprocess.Popen[str], timeout_s: float = 30.0) -> int:
        """Open a named pipe for writing and write the pcap header: simple_switch opens its
        inputs one by one, in port order, reading each one's header before the next; a dead
        switch is noticed meanwhile."""
        opened: list[int] = []
        opener = threading.Thread(target=lambda: opened.append(os.open(path, os.O_WRONLY)),
                                  daemon=True)
        opener.start()
        deadline = time.monotonic() + timeout_s
        while opener.is_alive() and switch.poll() is None and time.monotonic() < deadline:
            opener.join(0.05)
        if opener.is_alive():  # unblock the opener with a reader of our own, then give up
            reader = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            opener.join()
            os.close(reader)
            os.close(opened[0])
            reason = switch.stderr.read() if switch.poll() is not None and switch.stderr else ""
            raise Bmv2Error(f"simple_switch did not open {path.name} {reason}".strip())
        os.write(opened[0], pcap_header())
        return opened[0]

    def _wait_for_thrift(self, switch: subprocess.Popen[str], timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            alive(switch)
            try:
                with socket.create_connection(("127.0.0.1", self.thrift), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.05)
        raise Bmv2Error("simple_switch did not start its Thrift server")

    def _cli(self, commands: list[str]) -> str:
        if not commands:
            return ""
        done = subprocess.run(["simple_switch_CLI", "--thrift-port", str(self.thrift)],
                              input="\n".join(commands) + "\n", capture_output=True, text=True,
                              timeout=120, check=False)
        errors = [line for line in done.stdout.splitlines()
                  if re.search(r"\bError\b|Invalid|not a valid|exception", line, re.I)]
        if done.returncode != 0 or errors:
            raise Bmv2Error("simple_switch_CLI: " + "; ".join(errors or [done.stderr.strip()]))
        return done.stdout

    def _stop(self, switch: subprocess.Popen[str]) -> None:
        if switch.poll() is None:
            os.killpg(switch.pid, signal.SIGTERM)
            try:
                switch.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(switch.pid, signal.SIGKILL)
                switch.wait()


# --------------------------------------------------------------------------- comparison


def compare(ours: TargetRun, bmv2: TargetRun) -> list[str]:
    """Every difference, one line each (empty: the same packets and the same state)."""
    lines = []
    for port in sorted(set(ours.received) | set(bmv2.received)):
        a, b = ours.received.get(port, []), bmv2.received.get(port, [])
        if a == b:
            continue
        lines.append(f"port {port}: built-in sent {len(a)} packet(s), BMv2 {len(b)}")
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            if x != y:
                lines.append(f"  #{i} built-in {x.hex()}")
                lines.append(f"  #{i} BMv2     {y.hex()}")
                break
    for key in sorted(set(ours.state) | set(bmv2.state)):
        if ours.state.get(key) != bmv2.state.get(key):
            lines.append(f"{key}: built-in {ours.state.get(key)}, BMv2 {bmv2.state.get(key)}")
    return lines


# --------------------------------------------------------------------------- `lgkit stf --target`


def run_stf_on_bmv2(args: object, stmts: list[Stmt], pipeline: Pipeline, info: p4i.P4Info
                    ) -> int:
    """`lgkit stf --target bmv2|both`: judge the STF on BMv2, or compare the two targets."""
    missing = missing_tools()
    if missing:
        print(f"lgkit: error: bmv2: {', '.join(missing)} not installed (not on PATH)",
              file=sys.stderr)
        return 1
    a = cast(argparse.Namespace, args)
    try:
        with tempfile.TemporaryDirectory(prefix="lgkit-stf-") as tmp:
            work = Path(a.work) if a.work else Path(tmp)
            defines = [f"-D{d}" for d in a.define]
            json_path, bmv2_info = compile_bmv2(Path(a.program), work, a.include, defines)
            bmv2 = Bmv2StfRun(json_path, bmv2_info, work).run(stmts)
    except (Bmv2Error, StfError, ValueError) as exc:
        print(f"lgkit: error: bmv2: {exc}", file=sys.stderr)
        return 1
    if a.target == "bmv2":
        diffs = expect_diffs([s for s in stmts if isinstance(s, ExpectStmt)], bmv2.received)
        failures = failed_checks(stmts, bmv2.state)
        if not diffs and not failures:
            print(f"PASS {a.test} (BMv2)")
            return 0
        print(f"FAIL {a.test} (BMv2)")
        print(format_result(StfResult(diffs=diffs, check_failures=failures)))
        return 1
    ours = run_builtin(pipeline, info, stmts)
    differences = compare(ours, bmv2)
    packets = sum(len(v) for v in ours.received.values())
    if differences:
        print(f"DIFFERENT {a.test}: built-in target vs BMv2")
        print("\n".join(differences))
        return 1
    print(f"SAME {a.test}: {packets} packet(s) on {len(ours.received)} port(s), "
          f"{len(ours.state)} value(s) read, on the built-in target and BMv2")
    return 0
