"""Run-time control of a switch with BMv2 runtime_CLI commands, served over gRPC as JSON.

The gRPC service "lgkit.SwitchControl" has one unary method, Run: request
`{"command": "<line>"}`, reply `{"ok": bool, "output": str}` or `{"ok": false, "error": str}`.
No .proto is needed: the messages are JSON bytes.
"""

from __future__ import annotations

import ipaddress
import json
import math
from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import grpc

from lgkit.sw.exec.arch.tna.pktgen import USAGE as PKTGEN_USAGE
from lgkit.sw.exec.arch.tna.pktgen import Running
from lgkit.sw.exec.arch.tna.port_metadata import USAGE as PORT_METADATA_USAGE
from lgkit.sw.exec.arch.untimed import generator
from lgkit.sw.exec.interp.tables import Exact, Lpm, Optional_, Range, TableEntry, Ternary

if TYPE_CHECKING:
    from lgkit.sw.exec.externs.counter import CounterArray
    from lgkit.sw.exec.externs.register import RegisterArray
    from lgkit.sw.exec.interp.tables import KeyMatch, KeySpec, Table
    from lgkit.sw.exec.pipeline import Pipeline

    from .switch import Switch

SERVICE = "lgkit.SwitchControl"
RUN_METHOD = f"/{SERVICE}/Run"
MAX_LINE_BYTES = 16384
"Longest command line served (a table_add with every key and parameter fits in a few hundred)."
MAX_REQUEST_BYTES = MAX_LINE_BYTES + 1024
"Largest Run request the service decodes (the line plus its JSON wrapping)."

# Ranges of BMv2's types (simple_switch 1.15 accepts some values outside them silently, e.g.
# `mc_mgrp_create -1` makes group 4294967295; the kit refuses them instead).
PORTS = (0, 511)  # bit<9>
GROUPS = (0, 65535)  # mcast_grp: bit<16>
RIDS = (0, 65535)  # egress_rid: bit<16>
MIRROR_SESSIONS = (0, 32767)  # BMv2's mirroring sessions (32768 and above: not found)
COUNTS = (0, 2**31 - 1)  # queue depths, burst sizes (Thrift i32 in BMv2)
QUEUE_FULL_AT = "queue_full port"
Extern = TypeVar("Extern")
"""How `show_drops` names one queue's tail drops: `queue_full port <port> prio <prio>: <n>`
(beside the switch's total `queue_full`)."""


class CommandError(Exception):
    """A command that cannot be executed; the message is shown to the user."""


def parse_value(text: str) -> int:
    """An integer: decimal, 0x hex, 0b binary, IPv4 a.b.c.d, IPv6, or MAC aa:bb:cc:dd:ee:ff."""
    try:
        if text.count(".") == 3:
            return int(ipaddress.IPv4Address(text))
        if text.count(":") == 5 and all(len(p) <= 2 for p in text.split(":")):
            return int(text.replace(":", ""), 16)
        if ":" in text:
            return int(ipaddress.IPv6Address(text))
        return int(text, 0)
    except ValueError:
        raise CommandError(f"not a value: {text!r}") from None


def split_words(line: str) -> list[str]:
    """The words of a command line, up to a `#` comment (whitespace-separated, like BMv2's
    runtime_CLI; linear in the line's length)."""
    return line.partition("#")[0].split()


def _int(text: str, what: str, bounds: tuple[int, int] | None = None) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise CommandError(f"{what} must be an integer, got {text[:40]!r}") from None
    if bounds is not None and not bounds[0] <= value <= bounds[1]:
        raise CommandError(f"{what} must be in {bounds[0]}..{bounds[1]}, got {value}")
    return value


def _number(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise CommandError(f"{what} must be a number, got {text[:40]!r}") from None
    if not math.isfinite(value) or value < 0:
        raise CommandError(f"{what} must be a finite number >= 0, got {text[:40]!r}")
    return value


class SwitchCommands:
    """Executes runtime_CLI-style command lines against one switch.

    Multicast nodes (mc_node_create) live here; a group's replicas are written into
    `pipeline.mc_groups` as (rid, port) in association order, each node's ports ascending.
    """

    def __init__(self, switch: Switch) -> None:
        self.switch = switch
        self.nodes: dict[int, tuple[int, list[int]]] = {}
        self.group_nodes: dict[int, list[int]] = {}
        self._next_handle = 0
        self.commands: dict[str, tuple[Callable[[list[str]], str], str]] = {
            "set_queue_depth": (self.set_queue_depth, "<pkts> [<port> [<prio>]]"),
            "set_queue_rate": (self.set_queue_rate, "<pps> [<port> [<prio>]]"),
            "set_port_rate": (self.set_port_rate, "<bps> [<port> [<burst_bytes>]]"),
            "mirroring_add": (self.mirroring_add, "<session> <port>"),
            "mirroring_add_mc": (self.mirroring_add_mc, "<session> <mgrp>"),
            "mirroring_delete": (self.mirroring_delete, "<session>"),
            "mirroring_get": (self.mirroring_get, "<session>"),
            "mc_mgrp_create": (self.mc_mgrp_create, "<mgrp>"),
            "mc_mgrp_destroy": (self.mc_mgrp_destroy, "<mgrp>"),
            "mc_node_create": (self.mc_node_create, "<rid> <port>..."),
            "mc_node_update": (self.mc_node_update, "<handle> <port>..."),
            "mc_node_destroy": (self.mc_node_destroy, "<handle>"),
            "mc_node_associate": (self.mc_node_associate, "<mgrp> <handle>"),
            "mc_node_dissociate": (self.mc_node_dissociate, "<mgrp> <handle>"),
            "mc_dump": (self.mc_dump, ""),
            "table_add": (self.table_add, "<table> <action> <match>... => <param>... [<prio>]"),
            "table_set_default": (self.table_set_default, "<table> <action> <param>..."),
            "table_clear": (self.table_clear, "<table>"),
            "register_read": (self.register_read, "<register> <index>"),
            "register_write": (self.register_write, "<register> <index> <value>"),
            "counter_read": (self.counter_read, "<counter> <index>"),
            "show_drops": (self.show_drops, ""),
            "show_ports": (self.show_ports, ""),
            "show_passes": (self.show_passes, ""),
            "show_queues": (self.show_queues, ""),
            "help": (self.help, ""),
        }
        for keyword, usage in PKTGEN_USAGE.items():
            self.commands[keyword] = (partial(self.pktgen, keyword), usage)
        for keyword, usage in PORT_METADATA_USAGE.items():
            self.commands[keyword] = (partial(self.arch_command, keyword), usage)
        self._pktgen: Running | None = None
        switch.on_pipeline_change.append(self._forget_nodes)

    def _forget_nodes(self, _pipeline: Pipeline | None) -> None:
        self.nodes.clear()
        self.group_nodes.clear()
        if self._pktgen is not None:
            self._pktgen.stop()
        self._pktgen = None

    def pktgen(self, keyword: str, args: list[str]) -> str:
        """A packet-generator command of a TNA program (exec/arch/tna/pktgen.py): its packets
        enter on the generator port at their times on the switch's clock."""
        pipeline = self._pipeline()
        if keyword not in pipeline.arch.commands:
            raise CommandError(f"{keyword}: not a command of {pipeline.arch.name} programs")
        if self._pktgen is None:
            def inject(port: int, data: bytes) -> None:
                if self.switch.pipeline is pipeline:
                    self.switch.receive(port, data)
            self._pktgen = Running(generator(pipeline), self.switch.clock, inject)
        self._pktgen.command(keyword, args)
        return ""

    def arch_command(self, keyword: str, args: list[str]) -> str:
        """A configuration command of the program's architecture (TNA: port_metadata)."""
        pipeline = self._pipeline()
        if keyword not in pipeline.arch.commands:
            raise CommandError(f"{keyword}: not a command of {pipeline.arch.name} programs")
        pipeline.arch.command(pipeline, keyword, args)
        return ""

    def run(self, line: str) -> str:
        """Execute one command line; raise CommandError with a readable message on failure."""
        if len(line) > MAX_LINE_BYTES:
            raise CommandError(f"command line too long ({len(line)} characters; at most "
                               f"{MAX_LINE_BYTES})")
        words = split_words(line)
        if not words:
            return ""
        name, args = words[0], words[1:]
        if name not in self.commands:
            raise CommandError(f"unknown command {name!r} (try 'help')")
        fn, usage = self.commands[name]
        with self.switch.lock:
            try:
                return fn(args)
            except IndexError:
                raise CommandError(f"usage: {name} {usage}") from None
            except (KeyError, ValueError) as exc:
                raise CommandError(f"{name}: {exc}") from None

    # ---- traffic manager -----------------------------------------------------------------

    def _port_prio(self, args: list[str]) -> tuple[int | None, int | None]:
        port = _int(args[1], "port", PORTS) if len(args) > 1 else None
        prio = _int(args[2], "priority", (0, self.switch.tm.priority_queues - 1)) \
            if len(args) > 2 else None
        if len(args) > 3:
            raise IndexError
        return port, prio

    def set_queue_depth(self, args: list[str]) -> str:
        depth = _int(args[0], "depth", COUNTS)
        self.switch.tm.set_queue_depth(depth, *self._port_prio(args))
        return ""

    def set_queue_rate(self, args: list[str]) -> str:
        pps = _number(args[0], "rate")
        self.switch.tm.set_queue_rate(pps, *self._port_prio(args))
        return ""

    def set_port_rate(self, args: list[str]) -> str:
        rate = _number(args[0], "rate")
        burst = _int(args[2], "burst", COUNTS) if len(args) > 2 else None
        if len(args) > 3:
            raise IndexError
        ports = [_int(args[1], "port", PORTS)] if len(args) > 1 else sorted(self.switch.ports)
        for port in ports:
            self.switch.tm.set_port_rate(rate, port, burst_bytes=burst)
        return ""

    def show_queues(self, args: list[str]) -> str:
        return json.dumps(self.switch.tm.describe(), indent=1)

    def show_drops(self, args: list[str]) -> str:
        counters = self.switch.counters()
        lines = [f"{cause}: {count}" for cause, count in counters["drops"].items()]
        lines += [f"{QUEUE_FULL_AT} {port} prio {prio}: {count}"
                  for (port, prio), count in counters["queue_drops"].items()]
        return "\n".join(lines) or "no drops"

    def show_passes(self, args: list[str]) -> str:
        passes = self.switch.counters()["passes"]
        return "\n".join(f"{kind}: {count}" for kind, count in passes.items()) or "no passes"

    def show_ports(self, args: list[str]) -> str:
        ports = self.switch.counters()["ports"]
        return "\n".join(
            f"port {p}: rx {s['rx_packets']} pkts {s['rx_bytes']} B, "
            f"tx {s['tx_packets']} pkts {s['tx_bytes']} B" for p, s in ports.items())

    # ---- mirroring and multicast ---------------------------------------------------------

    def _pipeline(self) -> Pipeline:
        if self.switch.pipeline is None:
            raise CommandError("no P4 program is loaded")
        return self.switch.pipeline

    def mirroring_add(self, args: list[str]) -> str:
        session = _int(args[0], "session", MIRROR_SESSIONS)
        port = _int(args[1], "port", PORTS)
        self._pipeline().clone_sessions[session] = [(port, 0)]
        return ""

    def mirroring_add_mc(self, args: list[str]) -> str:
        """Clone to a multicast group: the group's replicas as they are now (a snapshot)."""
        session = _int(args[0], "session", MIRROR_SESSIONS)
        mgrp = _int(args[1], "mgrp", GROUPS)
        pipeline = self._pipeline()
        if mgrp not in pipeline.mc_groups:
            raise CommandError(f"multicast group {mgrp} does not exist")
        pipeline.clone_sessions[session] = [(port, rid) for rid, port in
                                            pipeline.mc_groups[mgrp]]
        return ""

    def mirroring_delete(self, args: list[str]) -> str:
        session = _int(args[0], "session", MIRROR_SESSIONS)
        if self._pipeline().clone_sessions.pop(session, None) is None:
            raise CommandError(f"mirroring session {session} does not exist")
        return ""

    def mirroring_get(self, args: list[str]) -> str:
        session = _int(args[0], "session", MIRROR_SESSIONS)
        pairs = self._pipeline().clone_sessions.get(session)
        if pairs is None:
            raise CommandError(f"mirroring session {session} does not exist")
        return " ".join(f"port={port} rid={rid}" for port, rid in pairs)

    def mc_mgrp_create(self, args: list[str]) -> str:
        mgrp = _int(args[0], "mgrp", GROUPS)
        groups = self._pipeline().mc_groups
        if mgrp in groups:
            raise CommandError(f"multicast group {mgrp} already exists")
        groups[mgrp] = []
        self.group_nodes[mgrp] = []
        return ""

    def mc_mgrp_destroy(self, args: list[str]) -> str:
        mgrp = _int(args[0], "mgrp", GROUPS)
        if self._pipeline().mc_groups.pop(mgrp, None) is None:
            raise CommandError(f"multicast group {mgrp} does not exist")
        self.group_nodes.pop(mgrp, None)
        return ""

    def mc_node_create(self, args: list[str]) -> str:
        rid = _int(args[0], "rid", RIDS)
        ports = sorted({_int(p, "port", PORTS) for p in args[1:]})
        handle = self._next_handle
        self._next_handle += 1
        self.nodes[handle] = (rid, ports)
        return f"node handle: {handle}"

    def _node(self, text: str) -> int:
        handle = _int(text, "handle")
        if handle not in self.nodes:
            raise CommandError(f"multicast node {handle} does not exist")
        return handle

    def mc_node_update(self, args: list[str]) -> str:
        handle = self._node(args[0])
        self.nodes[handle] = (self.nodes[handle][0], sorted({_int(p, "port", PORTS)
                                                             for p in args[1:]}))
        self._rebuild_all()
        return ""

    def mc_node_destroy(self, args: list[str]) -> str:
        handle = self._node(args[0])
        del self.nodes[handle]
        for handles in self.group_nodes.values():
            if handle in handles:
                handles.remove(handle)
        self._rebuild_all()
        return ""

    def _group(self, text: str) -> int:
        mgrp = _int(text, "mgrp", GROUPS)
        if mgrp not in self._pipeline().mc_groups:
            raise CommandError(f"multicast group {mgrp} does not exist")
        return mgrp

    def mc_node_associate(self, args: list[str]) -> str:
        mgrp, handle = self._group(args[0]), self._node(args[1])
        handles = self.group_nodes.setdefault(mgrp, [])
        if handle in handles:
            raise CommandError(f"node {handle} is already in group {mgrp}")
        handles.append(handle)
        self._rebuild(mgrp)
        return ""

    def mc_node_dissociate(self, args: list[str]) -> str:
        mgrp, handle = self._group(args[0]), self._node(args[1])
        handles = self.group_nodes.get(mgrp, [])
        if handle not in handles:
            raise CommandError(f"node {handle} is not in group {mgrp}")
        handles.remove(handle)
        self._rebuild(mgrp)
        return ""

    def _rebuild(self, mgrp: int) -> None:
        self._pipeline().mc_groups[mgrp] = [
            (rid, port) for handle in self.group_nodes[mgrp]
            for rid, ports in [self.nodes[handle]] for port in ports]

    def _rebuild_all(self) -> None:
        for mgrp in self.group_nodes:
            if mgrp in self._pipeline().mc_groups:
                self._rebuild(mgrp)

    def mc_dump(self, args: list[str]) -> str:
        groups = self._pipeline().mc_groups
        return "\n".join(f"mgrp {mgid}: " + " ".join(f"(rid={r}, port={p})" for r, p in nodes)
                         for mgid, nodes in sorted(groups.items())) or "no multicast groups"

    # ---- tables, registers, counters -----------------------------------------------------

    def _table(self, name: str) -> Table:
        tables = self._pipeline().tables
        if name in tables:
            return tables[name]
        matches = [t for full, t in tables.items() if full.split(".")[-1] == name]
        if len(matches) != 1:
            raise CommandError(f"no table {name!r}" if not matches else f"ambiguous table {name!r}")
        return matches[0]

    @staticmethod
    def _action(table: Table, name: str) -> str:
        if name in table.action_names:
            return name
        matches = [a for a in table.action_names if a.split(".")[-1] == name]
        if len(matches) != 1:
            raise CommandError(f"table {table.name} has no action {name!r}")
        return matches[0]

    def table_add(self, args: list[str]) -> str:
        table = self._table(args[0])
        action = self._action(table, args[1])
        if "=>" not in args:
            raise IndexError
        split = args.index("=>")
        matches, rest = args[2:split], args[split + 1:]
        if len(matches) != len(table.keys):
            raise CommandError(f"table {table.name} has {len(table.keys)} key(s), "
                               f"{len(matches)} given")
        needs_priority = any(k.match_kind in ("ternary", "range", "optional") for k in table.keys)
        priority = 0
        if needs_priority:
            if not rest:
                raise CommandError(f"table {table.name} needs a priority after the parameters")
            priority = _int(rest.pop(), "priority")
        keys = [self._key(spec, text) for spec, text in zip(table.keys, matches, strict=True)]
        table.insert(TableEntry(keys, action, [parse_value(v) for v in rest], priority))
        for hook in self.switch.on_entries_added:
            hook(1)
        return ""

    @staticmethod
    def _key(spec: KeySpec, text: str) -> KeyMatch | None:
        kind = spec.match_kind
        if kind == "exact":
            return Exact(parse_value(text))
        if kind == "lpm":
            value, _, length = text.partition("/")
            return Lpm(parse_value(value), _int(length, "prefix length") if length else spec.width)
        if kind == "ternary":
            value, sep, mask = text.partition("&&&")
            if not sep:
                raise CommandError(f"ternary key {spec.name} needs value&&&mask")
            return Ternary(parse_value(value), parse_value(mask))
        if kind == "range":
            lo, sep, hi = text.partition("->")
            if not sep:
                raise CommandError(f"range key {spec.name} needs lo->hi")
            return Range(parse_value(lo), parse_value(hi))
        if kind == "optional":
            return None if text == "*" else Optional_(parse_value(text))
        raise CommandError(f"unsupported match kind {kind}")

    def table_set_default(self, args: list[str]) -> str:
        table = self._table(args[0])
        table.set_default(self._action(table, args[1]), [parse_value(v) for v in args[2:]])
        return ""

    def table_clear(self, args: list[str]) -> str:
        table = self._table(args[0])
        table.clear()
        return ""

    def _register(self, name: str) -> RegisterArray:
        return _extern(self._pipeline().registers, "register", name)

    def _counter(self, name: str) -> CounterArray:
        return _extern(self._pipeline().counters, "counter", name)

    @staticmethod
    def _index(extern: RegisterArray | CounterArray, text: str) -> int:
        """An index into a register or counter array (BMv2: INVALID_INDEX outside it)."""
        index = _int(text, "index")
        if not 0 <= index < extern.size:
            raise CommandError(f"invalid index {index} for {extern.name} (size {extern.size})")
        return index

    def register_read(self, args: list[str]) -> str:
        register = self._register(args[0])
        return str(register.read(self._index(register, args[1])))

    def register_write(self, args: list[str]) -> str:
        register = self._register(args[0])
        register.write(self._index(register, args[1]), parse_value(args[2]))
        return ""

    def counter_read(self, args: list[str]) -> str:
        counter = self._counter(args[0])
        packets, nbytes = counter.read(self._index(counter, args[1]))
        return f"packets={packets} bytes={nbytes}"

    def help(self, args: list[str]) -> str:
        return "\n".join(f"{name} {usage}".rstrip() for name, (_, usage) in
                         sorted(self.commands.items()))


def _extern(objects: Mapping[str, Extern], what: str, name: str) -> Extern:
    """The extern array named `name` in full or by its last part."""
    if name in objects:
        return objects[name]
    matches = [o for full, o in objects.items() if full.split(".")[-1] == name]
    if len(matches) != 1:
        raise CommandError(f"no {what} {name!r}")
    return matches[0]


def _decode(data: bytes) -> Any:
    return json.loads(data.decode())


def _decode_request(data: bytes) -> Any:
    """A Run request; one too large or not JSON decodes to a refusal."""
    if len(data) > MAX_REQUEST_BYTES:
        return {"refused": f"request too large ({len(data)} bytes; at most {MAX_REQUEST_BYTES})"}
    try:
        return json.loads(data.decode())
    except (UnicodeDecodeError, json.JSONDecodeError):
        return {"refused": "request is not JSON"}


def _encode(obj: Any) -> bytes:
    return json.dumps(obj).encode()


def control_handler(commands: SwitchCommands) -> grpc.GenericRpcHandler:
    """The gRPC service to add to a server (e.g. P4RuntimeServer's extra_handlers)."""

    def run(request: Any, context: grpc.ServicerContext) -> dict[str, Any]:
        if not isinstance(request, dict) or not isinstance(request.get("command", ""), str):
            return {"ok": False, "error": "request must be {\"command\": \"<line>\"}"}
        if "refused" in request:
            return {"ok": False, "error": str(request["refused"])}
        try:
            return {"ok": True, "output": commands.run(request.get("command", ""))}
        except CommandError as exc:
            return {"ok": False, "error": str(exc)}
        except Exception as exc:  # noqa: BLE001 (a bug must not look like a dead switch)
            return {"ok": False, "error": f"internal error: {exc!r}"}

    method = grpc.unary_unary_rpc_method_handler(run, request_deserializer=_decode_request,
                                                 response_serializer=_encode)
    return grpc.method_handlers_generic_handler(SERVICE, {"Run": method})


class ControlClient:
    """Sends command lines to a switch's control service."""

    def __init__(self, address: str, timeout_s: float = 5.0) -> None:
        self.address = address
        self.timeout_s = timeout_s
        self._channel = grpc.insecure_channel(address)
        self._run = self._channel.unary_unary(RUN_METHOD, request_serializer=_encode,
                                              response_deserializer=_decode)

    def run(self, line: str) -> str:
        """Execute one command; CommandError if the switch refused it, ConnectionError if it
        cannot be reached."""
        try:
            reply = self._run({"command": line}, timeout=self.timeout_s)
        except grpc.RpcError as exc:
            if exc.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                raise ConnectionError(f"cannot reach the switch at {self.address}: "
                                      f"{exc.code().name}") from None
            raise CommandError(f"the switch answered {exc.code().name}: {exc.details()}") \
                from None
        if not reply.get("ok"):
            raise CommandError(reply.get("error", "failed"))
        return str(reply.get("output", ""))

    def close(self) -> None:
        self._channel.close()
