"""The P4Runtime gRPC service of the built-in switch: RPC handlers over one Switch object."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from concurrent import futures
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import grpc
from finsy.proto import U128, p4r, p4r_grpc

from . import action_profiles, digests, externs, idletimeout, port_metadata, pre, tables, value_sets
from .arbitration import Arbiter, Session
from .device import Device
from .errors import (
    MAX_WRITE_UPDATES,
    BatchStatus,
    P4RTError,
    code_number,
    invalid,
    not_found,
    unimplemented,
)
from .packetio import decode_packet_in, encode_packet_out
from .pipeconfig import BuiltConfig, build_config
from .schema import P4InfoIndex
from .state import DeviceState

if TYPE_CHECKING:
    from lgkit.sw.exec.pipeline import Pipeline

API_VERSION = "1.5.0"
NO_PIPELINE = "No forwarding pipeline config set for this device"
DIGEST_POLL_S = 0.005
MAX_STREAMS = 1024
"Open StreamChannels served at once; one more gets RESOURCE_EXHAUSTED."
STREAM_WORKERS = 4
"Threads that inject the streams' packet-outs (unary RPCs have their own)."
Cfg = p4r.SetForwardingPipelineConfigRequest
GetCfg = p4r.GetForwardingPipelineConfigRequest

WRITERS: dict[str, Callable[[DeviceState, int, Any], None]] = {
    "table_entry": tables.write_table_entry,
    "direct_counter_entry": tables.write_direct_counter,
    "direct_meter_entry": tables.write_direct_meter,
    "counter_entry": externs.write_counter,
    "meter_entry": externs.write_meter,
    "register_entry": externs.write_register,
    "packet_replication_engine_entry": lambda s, kind, msg: pre.write_pre(s.pipeline, kind, msg),
    "digest_entry": digests.write_digest_entry,
    "value_set_entry": value_sets.write_value_set,
    "extern_entry": port_metadata.write_extern,
    "action_profile_member": action_profiles.write_member,
    "action_profile_group": action_profiles.write_group,
}
READERS: dict[str, Callable[[DeviceState, Any], Iterator[Any]]] = {
    "table_entry": tables.read_table_entries,
    "direct_counter_entry": tables.read_direct_counters,
    "direct_meter_entry": tables.read_direct_meters,
    "counter_entry": externs.read_counters,
    "meter_entry": externs.read_meters,
    "register_entry": externs.read_registers,
    "packet_replication_engine_entry": lambda s, msg: pre.read_pre(s.pipeline, msg),
    "digest_entry": digests.read_digest_entries,
    "value_set_entry": value_sets.read_value_sets,
    "extern_entry": port_metadata.read_externs,
    "action_profile_member": action_profiles.read_members,
    "action_profile_group": action_profiles.read_groups,
}
SNAPSHOT_READERS = ("table_entry", "direct_counter_entry", "direct_meter_entry")
"Readers that work from a snapshot of a table's entries and need no switch lock."
READ_CHUNK = 200
"Entities per ReadResponse of a Read (each response is serialised while others wait)."


@dataclass(frozen=True)
class TooLarge:
    """A request refused before decoding: `size` bytes, more than `limit`."""

    size: int
    limit: int


def election_of(message: Any) -> int | None:
    """The message's election id; None when unset (lower than any election id)."""
    return U128.decode(message.election_id) if message.HasField("election_id") else None


class P4RuntimeService(p4r_grpc.P4RuntimeServicer):
    """P4Runtime for one device: arbitration, pipeline configs, entities, packet I/O, digests."""

    def __init__(self, switch: Device) -> None:
        self.switch = switch
        self.device_id = int(switch.device_id)
        self.arbiter = Arbiter(self.device_id)
        self.state: DeviceState | None = None
        self._saved: BuiltConfig | None = None
        self._config_lock = threading.RLock()
        self._digest_lists = digests.DigestLists()
        self._stopping = threading.Event()
        self._streams = 0
        self._stream_pool = futures.ThreadPoolExecutor(STREAM_WORKERS,
                                                       thread_name_prefix="p4rt-stream")
        self._digest_thread = threading.Thread(target=self._pump_digests, daemon=True,
                                               name="p4rt-digests")
        self._idle_thread = threading.Thread(target=self._pump_idle_timeouts, daemon=True,
                                             name="p4rt-idle-timeouts")

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        self.switch.packet_in_handlers.append(self._on_packet_in)
        self.switch.on_pipeline_change.append(self._on_pipeline_change)
        self._digest_thread.start()
        self._idle_thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._on_packet_in in self.switch.packet_in_handlers:
            self.switch.packet_in_handlers.remove(self._on_packet_in)
        if self._on_pipeline_change in self.switch.on_pipeline_change:
            self.switch.on_pipeline_change.remove(self._on_pipeline_change)
        self.arbiter.close_all()
        for thread in (self._digest_thread, self._idle_thread):
            if thread.is_alive():
                thread.join(timeout=1)
        self._stream_pool.shutdown(wait=False, cancel_futures=True)

    # ------------------------------------------------------------------ checks

    def _check_device(self, device_id: int) -> None:
        if device_id != self.device_id:
            raise not_found(f"unknown device id {device_id} (this is device {self.device_id})")

    def _check_primary(self, request: Any) -> None:
        if request.role:
            raise unimplemented("only the default role is supported")
        election_id = election_of(request)
        if not self.arbiter.is_primary(election_id):
            raise P4RTError(grpc.StatusCode.PERMISSION_DENIED,
                            f"election id {election_id} is not the primary client's")

    def _require_state(self) -> DeviceState:
        state = self.state
        if state is None:
            raise P4RTError(grpc.StatusCode.FAILED_PRECONDITION, NO_PIPELINE)
        return state

    # ------------------------------------------------------------------ unary RPCs

    def Capabilities(self, request: p4r.CapabilitiesRequest, context: Any) -> Any:
        return p4r.CapabilitiesResponse(p4runtime_api_version=API_VERSION)

    def SetForwardingPipelineConfig(self, request: Cfg, context: Any) -> Any:
        try:
            self._check_device(request.device_id)
            self._check_primary(request)
            with self._config_lock:
                self._set_config(request)
        except P4RTError as err:
            context.abort(err.code, err.message)
        return p4r.SetForwardingPipelineConfigResponse()

    def _set_config(self, request: Cfg) -> None:
        action = request.action
        if action == Cfg.COMMIT:
            if self._saved is None:
                raise P4RTError(grpc.StatusCode.FAILED_PRECONDITION, "no saved config to commit")
            self.commit(self._saved)
            self._saved = None
            return
        if action not in (Cfg.VERIFY, Cfg.VERIFY_AND_SAVE, Cfg.VERIFY_AND_COMMIT,
                          Cfg.RECONCILE_AND_COMMIT):
            raise invalid(f"unknown SetForwardingPipelineConfig action {action}")
        built = build_config(request.config)
        if action == Cfg.VERIFY_AND_SAVE:
            self._saved = built
        elif action == Cfg.VERIFY_AND_COMMIT:
            self.commit(built)
        elif action == Cfg.RECONCILE_AND_COMMIT:
            self._reconcile(built)

    def commit(self, built: BuiltConfig) -> None:
        """Install a verified config: a fresh pipeline with empty tables and externs."""
        with self.switch.lock:
            self.switch.set_pipeline(built.pipeline)
            self.state = DeviceState.create(built.config, built.index, built.pipeline,
                                            built.source)
            self.state.now_us = self._now_us

    def commit_config(self, config: p4r.ForwardingPipelineConfig) -> None:
        """Verify and commit a config (P4Info + device config) without a client, at start-up."""
        with self._config_lock:
            self.commit(build_config(config))

    def _reconcile(self, built: BuiltConfig) -> None:
        current = self.state
        if current is None:
            self.commit(built)
            return
        if built.source != current.program_source:
            raise unimplemented("RECONCILE_AND_COMMIT to a different program is not supported; "
                                "use VERIFY_AND_COMMIT")
        index = P4InfoIndex.build(built.config.p4info)
        index.check_against(current.pipeline)
        with self.switch.lock:
            state = DeviceState.create(built.config, index, current.pipeline, built.source)
            state.now_us = self._now_us
            state.initial_defaults = current.initial_defaults
            state.digest_configs = current.digest_configs
            self.state = state

    def GetForwardingPipelineConfig(self, request: GetCfg, context: Any) -> Any:
        try:
            self._check_device(request.device_id)
        except P4RTError as err:
            context.abort(err.code, err.message)
        state = self.state
        if state is None:
            return p4r.GetForwardingPipelineConfigResponse()  # the spec: config left unset
        full = state.config
        config = p4r.ForwardingPipelineConfig()
        if full.HasField("cookie"):
            config.cookie.CopyFrom(full.cookie)
        if request.response_type in (GetCfg.ALL, GetCfg.P4INFO_AND_COOKIE):
            config.p4info.CopyFrom(full.p4info)
        if request.response_type in (GetCfg.ALL, GetCfg.DEVICE_CONFIG_AND_COOKIE):
            config.p4_device_config = full.p4_device_config
        return p4r.GetForwardingPipelineConfigResponse(config=config)

    def _admit_write(self, request: p4r.WriteRequest | TooLarge,
                     ) -> tuple[p4r.WriteRequest, DeviceState]:
        """The Write request and the pipeline state it applies to, or the P4RTError refusing it."""
        if isinstance(request, TooLarge):
            raise P4RTError(grpc.StatusCode.RESOURCE_EXHAUSTED,
                            f"Write request of {request.size} bytes; this server decodes at "
                            f"most {request.limit} (at most {MAX_WRITE_UPDATES} updates)")
        if len(request.updates) > MAX_WRITE_UPDATES:
            raise P4RTError(grpc.StatusCode.RESOURCE_EXHAUSTED,
                            f"a Write batch may hold at most {MAX_WRITE_UPDATES} updates "
                            f"(this one has {len(request.updates)}); split it")
        self._check_device(request.device_id)
        self._check_primary(request)
        state = self._require_state()
        if request.atomicity != p4r.WriteRequest.CONTINUE_ON_ERROR:
            raise unimplemented("only CONTINUE_ON_ERROR batches are supported")
        return request, state

    def Write(self, request: p4r.WriteRequest | TooLarge, context: Any) -> Any:
        try:
            write, state = self._admit_write(request)
        except P4RTError as err:
            context.abort(err.code, err.message)
        results = [self._apply_update(state, update) for update in write.updates]
        added = sum(1 for update, result in zip(write.updates, results, strict=True)
                    if result is None and update.type == p4r.Update.INSERT
                    and update.entity.HasField("table_entry"))
        if added:
            for hook in self.switch.on_entries_added:
                hook(added)
        if any(result is not None for result in results):
            status = BatchStatus(results)
            context.abort(status.code, status.details, status.trailing_metadata)
        return p4r.WriteResponse()

    def _apply_update(self, state: DeviceState, update: p4r.Update) -> P4RTError | None:
        which = update.entity.WhichOneof("entity")
        try:
            if update.type == p4r.Update.UNSPECIFIED:
                raise invalid("update type is UNSPECIFIED")
            if which is None:
                raise invalid("update has no entity")
            if which not in WRITERS:
                raise unimplemented(f"writing {which} is not supported")
            with self.switch.lock:
                WRITERS[which](state, update.type, getattr(update.entity, which))
        except P4RTError as err:
            return err
        except (KeyError, ValueError, IndexError) as exc:
            return invalid(f"{which}: {exc}")
        return None

    def Read(self, request: p4r.ReadRequest, context: Any) -> Iterator[p4r.ReadResponse]:
        """Entities in responses of at most READ_CHUNK each, encoded as they are sent."""
        try:
            self._check_device(request.device_id)
            state = self._require_state()
            chunk: list[p4r.Entity] = []
            for entity in self._read_entities(state, request):
                chunk.append(entity)
                if len(chunk) == READ_CHUNK:
                    yield p4r.ReadResponse(entities=chunk)
                    chunk = []
                    time.sleep(0)  # hand the GIL to the packet loop if it waits
        except P4RTError as err:
            context.abort(err.code, err.message)
        if chunk:
            yield p4r.ReadResponse(entities=chunk)

    def _read_entities(self, state: DeviceState, request: p4r.ReadRequest
                       ) -> Iterator[p4r.Entity]:
        """Table entries (and their direct resources) come from a snapshot of the table, read
        and encoded without the switch lock, so a large Read never holds the packet path;
        other entities are read under the lock."""
        for entity in request.entities:
            which = entity.WhichOneof("entity")
            if which is None:
                raise invalid("read request entity is empty")
            if which not in READERS:
                raise unimplemented(f"reading {which} is not supported")
            found: Iterable[Any] = READERS[which](state, getattr(entity, which))
            if which not in SNAPSHOT_READERS:
                with self.switch.lock:
                    found = list(found)
            for item in found:
                yield p4r.Entity(**{which: item})

    # ------------------------------------------------------------------ stream

    async def StreamChannel(self, request_iterator: AsyncIterator[p4r.StreamMessageRequest],
                            context: Any) -> AsyncIterator[p4r.StreamMessageResponse]:
        """A coroutine on the server's loop: it holds no thread while the client is idle."""
        if self._streams >= MAX_STREAMS:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                                f"this switch serves at most {MAX_STREAMS} streams at once")
        self._streams += 1
        session = Session(asyncio.get_running_loop())
        reader = asyncio.create_task(self._read_stream(request_iterator, session))
        try:
            while True:
                msg = await session.outbox.get()
                if msg is None:
                    return
                if isinstance(msg, P4RTError):
                    await context.abort(msg.code, msg.message)
                else:
                    yield msg
        finally:
            self._streams -= 1
            reader.cancel()
            self.arbiter.leave(session)

    async def _read_stream(self, requests: AsyncIterator[p4r.StreamMessageRequest],
                           session: Session) -> None:
        loop = asyncio.get_running_loop()
        try:
            async for request in requests:
                if request.WhichOneof("update") == "packet":  # takes the switch: off the loop
                    fatal = await loop.run_in_executor(self._stream_pool,
                                                       self._on_stream_message, session, request)
                else:
                    fatal = self._on_stream_message(session, request)
                if fatal is not None:
                    session.send(fatal)
                    return
        except (grpc.RpcError, RuntimeError):  # the client went away; the pool is shut down
            pass
        finally:
            session.send(None)

    def _on_stream_message(self, session: Session, request: p4r.StreamMessageRequest
                           ) -> P4RTError | None:
        """Handle one client message; return an error that ends the stream, if any."""
        which = request.WhichOneof("update")
        if which == "arbitration":
            return self._on_arbitration(session, request.arbitration)
        if not session.live:
            return P4RTError(grpc.StatusCode.FAILED_PRECONDITION,
                             "the first stream message must be a MasterArbitrationUpdate")
        if which == "packet":
            self._on_packet_out(session, request.packet)
        return None

    def _on_arbitration(self, session: Session, update: p4r.MasterArbitrationUpdate
                        ) -> P4RTError | None:
        try:
            if session.live and update.device_id != self.device_id:
                raise P4RTError(grpc.StatusCode.FAILED_PRECONDITION,
                                "a stream cannot change its device id")
            self._check_device(update.device_id)
            if update.role.name:
                raise unimplemented("only the default role is supported")
            self.arbiter.arbitrate(session, election_of(update))
        except P4RTError as err:
            return err
        return None

    def _on_packet_out(self, session: Session, packet: p4r.PacketOut) -> None:
        try:
            if not self.arbiter.is_primary(session.election_id):
                raise P4RTError(grpc.StatusCode.PERMISSION_DENIED,
                                "only the primary client may send packets")
            state = self._require_state()
            frame = encode_packet_out(state.index.controller_headers.get("packet_out"), packet)
            if self.switch.cpu_port is None:
                raise P4RTError(grpc.StatusCode.FAILED_PRECONDITION, "the switch has no CPU port")
        except P4RTError as err:
            error = p4r.StreamError(canonical_code=code_number(err.code), message=err.message,
                                    packet_out=p4r.PacketOutError(packet_out=packet))
            session.send(p4r.StreamMessageResponse(error=error))
            return
        self.switch.packet_out(frame)

    def _on_pipeline_change(self, pipeline: Pipeline | None) -> None:
        """Another path (CLI, start-up) replaced the program: our P4Info no longer applies."""
        state = self.state
        if state is not None and state.pipeline is not pipeline:
            self.state = None

    def _on_packet_in(self, frame: bytes) -> None:
        state = self.state
        if state is None:
            return
        packet = decode_packet_in(state.index.controller_headers.get("packet_in"), frame)
        self.arbiter.send_to_primary(p4r.StreamMessageResponse(packet=packet))

    def _now_us(self) -> int:
        return self.switch.clock.now_ns() // 1000

    def _pump_idle_timeouts(self) -> None:
        while not self._stopping.wait(idletimeout.CHECK_PERIOD_S):
            state = self.state
            if state is None:
                continue
            entries = idletimeout.expired(state, self._now_us())  # no lock: idletimeout.py
            if entries:
                note = idletimeout.notification(entries, self.switch.clock.now_ns())
                self.arbiter.send_to_primary(note)

    def _pump_digests(self) -> None:
        """Send the switch's digests to the primary client; a program not loaded over P4Runtime
        has no digest configured, so its digests are dropped (and counted), as BMv2's are."""
        while not self._stopping.wait(DIGEST_POLL_S):
            state, pipeline = self.state, self.switch.pipeline
            if pipeline is None or not pipeline.digests:
                continue
            with self.switch.lock:
                if state is None or state.pipeline is not pipeline:
                    pipeline.digests.drop_all()
                    continue
                emitted = list(pipeline.digests)
                pipeline.digests.clear()
            for digest_list in self._digest_lists.build(state, emitted):
                self.arbiter.send_to_primary(p4r.StreamMessageResponse(digest=digest_list))
