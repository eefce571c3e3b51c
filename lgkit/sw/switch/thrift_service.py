"""BMv2's Thrift runtime services (`standard`, `simple_pre_lag`, `simple_switch`) over
SwitchCommands, so that BMv2's own simple_switch_CLI drives the built-in switch.

Served (what `lgkit switch-cli` supports): bm_get_config / bm_get_config_md5, table_add,
table_set_default, table_clear, register_read/write, counter_read, mc_mgrp_create/destroy,
mc_node_create/update/destroy/associate/dissociate, mirroring_add(_mc)/delete, set_queue_depth,
set_queue_rate. Other methods answer Thrift's UNKNOWN_METHOD, which the CLI reports. Messages
use the binary protocol, multiplexed by service name, as BMv2's runtime does.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from typing import Any

from thrift.protocol import TBinaryProtocol
from thrift.server import TServer
from thrift.Thrift import TApplicationException, TMessageType, TType
from thrift.TMultiplexedProcessor import TMultiplexedProcessor
from thrift.transport import TSocket, TTransport

from .control_service import CommandError

Fields = dict[int, Any]
# BMv2's error codes: InvalidTableOperation ERROR, InvalidRegisterOperation / InvalidCounter-
# Operation ERROR, InvalidMcOperation ERROR, InvalidMirroringOperation SESSION_NOT_FOUND
TABLE_ERROR, EXTERN_ERROR, MC_ERROR, MIRROR_ERROR = 100, 3, 5, 1
BMV2_MAX_PRIORITY = (1 << 24) - 1  # BMv2: the smaller priority wins; P4Runtime: the larger
LGKIT_SERVICE = "lgkit"  # run(1: string line) -> string: a switch-cli command line


class ThriftError(Exception):
    """A method's declared exception: struct {1: i32 code} in result field 1."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def read_value(iprot: Any, ttype: int) -> Any:
    """One value of type `ttype` (structs as {field id: value}, strings as bytes)."""
    readers = {TType.BOOL: iprot.readBool, TType.BYTE: iprot.readByte,
               TType.I16: iprot.readI16, TType.I32: iprot.readI32, TType.I64: iprot.readI64,
               TType.DOUBLE: iprot.readDouble, TType.STRING: iprot.readBinary}
    if ttype in readers:
        return readers[ttype]()
    if ttype == TType.STRUCT:
        return read_struct(iprot)
    if ttype in (TType.LIST, TType.SET):
        begin, end = ((iprot.readListBegin, iprot.readListEnd) if ttype == TType.LIST
                      else (iprot.readSetBegin, iprot.readSetEnd))
        etype, size = begin()
        items = [read_value(iprot, etype) for _ in range(size)]
        end()
        return items
    if ttype == TType.MAP:
        ktype, vtype, size = iprot.readMapBegin()
        mapping = {read_value(iprot, ktype): read_value(iprot, vtype) for _ in range(size)}
        iprot.readMapEnd()
        return mapping
    raise TApplicationException(TApplicationException.PROTOCOL_ERROR, f"bad type {ttype}")


def read_struct(iprot: Any) -> Fields:
    fields: Fields = {}
    iprot.readStructBegin()
    while True:
        _, ftype, fid = iprot.readFieldBegin()
        if ftype == TType.STOP:
            break
        fields[fid] = read_value(iprot, ftype)
        iprot.readFieldEnd()
    iprot.readStructEnd()
    return fields


def write_field(oprot: Any, fid: int, ttype: int, value: Any) -> None:
    oprot.writeFieldBegin("f", ttype, fid)
    if ttype == TType.I32:
        oprot.writeI32(value)
    elif ttype == TType.I64:
        oprot.writeI64(value)
    elif ttype == TType.STRING:
        oprot.writeBinary(value if isinstance(value, bytes) else value.encode())
    elif ttype == TType.STRUCT:  # value: [(fid, ttype, value), ...]
        oprot.writeStructBegin("s")
        for inner in value:
            write_field(oprot, *inner)
        oprot.writeFieldStop()
        oprot.writeStructEnd()
    oprot.writeFieldEnd()


Reply = tuple[int, Any] | None  # (Thrift type, value) of the result, None for void
Method = Callable[[Fields], Reply]


class Processor:
    """One Thrift service: method name -> handler(args) over the binary protocol."""

    def __init__(self, methods: dict[str, tuple[Method, int]]) -> None:
        self.methods = methods  # name -> (handler, error code for its exception)

    def process(self, iprot: Any, oprot: Any) -> bool:
        name, _, seqid = iprot.readMessageBegin()
        args = read_struct(iprot)
        iprot.readMessageEnd()
        entry = self.methods.get(name)
        if entry is None:
            self._exception(oprot, name, seqid, TApplicationException(
                TApplicationException.UNKNOWN_METHOD, f"{name} is not served by the lgkit switch"))
            return True
        handler, error_code = entry
        try:
            reply, failure = handler(args), None
        except ThriftError as exc:
            reply, failure = None, exc.code
        except (CommandError, KeyError, ValueError, IndexError):
            reply, failure = None, error_code
        oprot.writeMessageBegin(name, TMessageType.REPLY, seqid)
        oprot.writeStructBegin("result")
        if failure is not None:
            write_field(oprot, 1, TType.STRUCT, [(1, TType.I32, failure)])
        elif reply is not None:
            write_field(oprot, 0, *reply)
        oprot.writeFieldStop()
        oprot.writeStructEnd()
        oprot.writeMessageEnd()
        oprot.trans.flush()
        return True

    @staticmethod
    def _exception(oprot: Any, name: str, seqid: int, exc: TApplicationException) -> None:
        oprot.writeMessageBegin(name, TMessageType.EXCEPTION, seqid)
        exc.write(oprot)
        oprot.writeMessageEnd()
        oprot.trans.flush()


def _hex(data: bytes) -> str:
    return hex(int.from_bytes(data, "big"))


def _text(data: bytes | str) -> str:
    return data.decode() if isinstance(data, bytes) else data


def _ports(port_map: bytes | str) -> list[str]:
    """runtime_CLI's port map: a '0'/'1' string, port 0 last."""
    return [str(i) for i, c in enumerate(reversed(_text(port_map))) if c == "1"]


def match_text(param: Fields) -> str:
    """A BmMatchParam as a switch-cli key: v, v/len, v&&&mask or lo->hi."""
    kind = param.get(1, 0)
    if kind == 0:
        return _hex(param[2][1])
    if kind == 1:
        return f"{_hex(param[3][1])}/{param[3][2]}"
    if kind == 2:
        return f"{_hex(param[4][1])}&&&{_hex(param[4][2])}"
    if kind == 4:
        return f"{_hex(param[6][1])}->{_hex(param[6][2])}"
    raise ThriftError(TABLE_ERROR, "valid match keys are not supported")


class RuntimeServices:
    """The three services, each method a SwitchCommands command line."""

    def __init__(self, run: Callable[[str], str], config_json: Callable[[], str]) -> None:
        self.run = run
        self.config_json = config_json
        self._handles: dict[str, int] = {}
        self._lock = threading.Lock()

    def processor(self) -> TMultiplexedProcessor:
        mux = TMultiplexedProcessor()
        mux.registerProcessor("standard", Processor(self._standard()))
        mux.registerProcessor("simple_pre_lag", Processor(self._pre()))
        mux.registerProcessor("simple_switch", Processor(self._simple_switch()))
        mux.registerProcessor(LGKIT_SERVICE, Processor({
            "run": (lambda a: (TType.STRING, self._run_line(_text(a[1]))), 0)}))
        return mux

    def _run_line(self, line: str) -> str:
        """Our own service (for the simple_switch_CLI shim): one switch-cli command line;
        errors come back as text, 'error: ...'."""
        try:
            return self.run(line)
        except CommandError as exc:
            return f"error: {exc}"

    def _void(self, line: str) -> Reply:
        self.run(line)
        return None

    def _standard(self) -> dict[str, tuple[Method, int]]:
        cfg = self.config_json
        return {
            "bm_get_config": (lambda a: (TType.STRING, cfg()), TABLE_ERROR),
            "bm_get_config_md5": (lambda a: (TType.STRING, hashlib.md5(cfg().encode())
                                             .digest()), TABLE_ERROR),
            "bm_mt_add_entry": (self._add_entry, TABLE_ERROR),
            "bm_mt_set_default_action": (lambda a: self._void(
                f"table_set_default {_text(a[2])} {_text(a[3])} "
                + " ".join(_hex(d) for d in a.get(4, []))), TABLE_ERROR),
            "bm_mt_clear_entries": (lambda a: self._void(f"table_clear {_text(a[2])}"),
                                    TABLE_ERROR),
            "bm_register_read": (lambda a: (TType.I64, int(self.run(
                f"register_read {_text(a[2])} {a[3]}"))), EXTERN_ERROR),
            "bm_register_write": (lambda a: self._void(
                f"register_write {_text(a[2])} {a[3]} {a[4]}"), EXTERN_ERROR),
            "bm_counter_read": (self._counter_read, EXTERN_ERROR),
        }

    def _add_entry(self, args: Fields) -> Reply:
        table, matches = _text(args[2]), args.get(3, [])
        keys = " ".join(match_text(p) for p in matches)
        params = " ".join(_hex(d) for d in args.get(5, []))
        line = f"table_add {table} {_text(args[4])} {keys} => {params}"
        priority = (args.get(6) or {}).get(1)
        if priority is not None and any(p.get(1) in (2, 4) for p in matches):
            line += f" {BMV2_MAX_PRIORITY - priority}"
        self.run(line)
        with self._lock:
            handle = self._handles.get(table, 0)
            self._handles[table] = handle + 1
        return TType.I32, handle

    def _counter_read(self, args: Fields) -> Reply:
        text = self.run(f"counter_read {_text(args[2])} {args[3]}")
        values = dict(part.split("=") for part in text.split())
        return TType.STRUCT, [(1, TType.I64, int(values["bytes"])),
                              (2, TType.I64, int(values["packets"]))]

    def _pre(self) -> dict[str, tuple[Method, int]]:
        def node_create(a: Fields) -> Reply:
            out = self.run(f"mc_node_create {a[2]} {' '.join(_ports(a[3]))}")
            return TType.I32, int(out.rsplit(":", 1)[1])

        def mgrp_create(a: Fields) -> Reply:
            self.run(f"mc_mgrp_create {a[2]}")
            return TType.I32, a[2]  # the group id is its handle, as in BMv2

        return {
            "bm_mc_mgrp_create": (mgrp_create, MC_ERROR),
            "bm_mc_mgrp_destroy": (lambda a: self._void(f"mc_mgrp_destroy {a[2]}"), MC_ERROR),
            "bm_mc_node_create": (node_create, MC_ERROR),
            "bm_mc_node_update": (lambda a: self._void(
                f"mc_node_update {a[2]} {' '.join(_ports(a[3]))}"), MC_ERROR),
            "bm_mc_node_destroy": (lambda a: self._void(f"mc_node_destroy {a[2]}"), MC_ERROR),
            "bm_mc_node_associate": (lambda a: self._void(
                f"mc_node_associate {a[2]} {a[3]}"), MC_ERROR),
            "bm_mc_node_dissociate": (lambda a: self._void(
                f"mc_node_dissociate {a[2]} {a[3]}"), MC_ERROR),
        }

    def _simple_switch(self) -> dict[str, tuple[Method, int]]:
        def mirroring_add(a: Fields) -> Reply:
            config = a.get(2) or {}
            if config.get(2):
                return self._void(f"mirroring_add_mc {a[1]} {config[2]}")
            return self._void(f"mirroring_add {a[1]} {config.get(1, 0)}")

        def queue(line: str) -> Method:
            def set_queue(a: Fields) -> Reply:
                self.run(line.format(*(a.get(i) for i in range(4))))
                return TType.I32, 0  # BMv2 answers a status code

            return set_queue

        return {
            "mirroring_session_add": (mirroring_add, MIRROR_ERROR),
            "mirroring_session_delete": (lambda a: self._void(f"mirroring_delete {a[1]}"),
                                         MIRROR_ERROR),
            "set_egress_queue_depth": (queue("set_queue_depth {2} {1}"), MIRROR_ERROR),
            "set_all_egress_queue_depths": (queue("set_queue_depth {1}"), MIRROR_ERROR),
            "set_egress_priority_queue_depth": (queue("set_queue_depth {3} {1} {2}"),
                                                MIRROR_ERROR),
            "set_egress_queue_rate": (queue("set_queue_rate {2} {1}"), MIRROR_ERROR),
            "set_all_egress_queue_rates": (queue("set_queue_rate {1}"), MIRROR_ERROR),
            "set_egress_priority_queue_rate": (queue("set_queue_rate {3} {1} {2}"),
                                               MIRROR_ERROR),
        }


class ThriftServer:
    """The services on host:port (a thread per connection), started and stopped with the switch."""

    def __init__(self, services: RuntimeServices, port: int, host: str = "127.0.0.1") -> None:
        self.socket = TSocket.TServerSocket(host=host, port=port)
        self.server = TServer.TThreadedServer(
            services.processor(), self.socket, TTransport.TBufferedTransportFactory(),
            TBinaryProtocol.TBinaryProtocolFactory())
        self.thread = threading.Thread(target=self._serve, daemon=True, name="thrift")

    def start(self) -> None:
        self.socket.listen()  # bind now: a busy port is an error at start
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                client = self.socket.accept()
            except (OSError, TTransport.TTransportException):
                return  # stop() closed the listening socket
            if client is not None:
                threading.Thread(target=self.server.handle, args=(client,), daemon=True).start()

    def stop(self) -> None:
        self.socket.close()
