"""SwitchConnection: one P4Runtime client (a stream, arbitration, writes, reads, packet I/O)."""

import queue
import threading
from datetime import UTC, datetime

import grpc
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

ELECTION_ID = (0, 1)  # (high, low)
connections = []


def ShutdownAllSwitchConnections():
    for connection in list(connections):
        connection.shutdown()


class _Requests:
    """The request side of the stream: an iterator fed by put(), ended by close()."""

    _END = object()

    def __init__(self):
        self._queue = queue.Queue()

    def put(self, message):
        self._queue.put(message)

    def close(self):
        self._queue.put(self._END)

    def __iter__(self):
        return iter(self._queue.get, self._END)


class SwitchConnection:
    def __init__(self, name=None, address="127.0.0.1:50051", device_id=0,
                 proto_dump_file=None):
        self.name, self.address, self.device_id = name, address, device_id
        channel = grpc.insecure_channel(address)
        if proto_dump_file is not None:
            channel = grpc.intercept_channel(channel, _RequestLog(proto_dump_file))
        self.channel = channel
        self.client_stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
        self.requests = _Requests()
        self.inbox = {kind: queue.Queue() for kind in
                      ("arbitration", "packet", "digest", "idle_timeout_notification", "error")}
        self._responses = self.client_stub.StreamChannel(iter(self.requests))
        self._reader = threading.Thread(target=self._read_stream, daemon=True)
        self._reader.start()
        connections.append(self)

    def _read_stream(self):
        try:
            for message in self._responses:
                kind = message.WhichOneof("update")
                if kind in self.inbox:
                    self.inbox[kind].put(getattr(message, kind))
        except grpc.RpcError:
            pass  # the stream ended (shutdown, or the switch went away)

    def buildDeviceConfig(self, **kwargs):
        raise NotImplementedError("a target-specific connection builds the device config")

    def shutdown(self):
        self.requests.close()
        self._responses.cancel()
        if self in connections:
            connections.remove(self)

    def _stamp(self, request):
        request.device_id = self.device_id
        request.election_id.high, request.election_id.low = ELECTION_ID
        return request

    def MasterArbitrationUpdate(self, dry_run=False, timeout=10):
        request = p4runtime_pb2.StreamMessageRequest()
        self._stamp(request.arbitration)
        if dry_run:
            print("P4Runtime MasterArbitrationUpdate:", request)
            return None
        self.requests.put(request)
        return self.inbox["arbitration"].get(timeout=timeout)

    def SetForwardingPipelineConfig(self, p4info, dry_run=False, **kwargs):
        request = self._stamp(p4runtime_pb2.SetForwardingPipelineConfigRequest())
        request.config.p4info.CopyFrom(p4info)
        request.config.p4_device_config = self.buildDeviceConfig(**kwargs)
        request.action = p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT
        if dry_run:
            print("P4Runtime SetForwardingPipelineConfig:", request)
        else:
            self.client_stub.SetForwardingPipelineConfig(request)

    def _write(self, kind, field, entity, dry_run):
        request = self._stamp(p4runtime_pb2.WriteRequest())
        update = request.updates.add(type=kind)
        getattr(update.entity, field).CopyFrom(entity)
        if dry_run:
            print("P4Runtime Write:", request)
        else:
            self.client_stub.Write(request)

    def WriteTableEntry(self, table_entry, dry_run=False):
        kind = (p4runtime_pb2.Update.MODIFY if table_entry.is_default_action
                else p4runtime_pb2.Update.INSERT)
        self._write(kind, "table_entry", table_entry, dry_run)

    def ModifyTableEntry(self, table_entry, dry_run=False):
        self._write(p4runtime_pb2.Update.MODIFY, "table_entry", table_entry, dry_run)

    def DeleteTableEntry(self, table_entry, dry_run=False):
        self._write(p4runtime_pb2.Update.DELETE, "table_entry", table_entry, dry_run)

    def WritePREEntry(self, pre_entry, dry_run=False):
        self._write(p4runtime_pb2.Update.INSERT, "packet_replication_engine_entry", pre_entry,
                    dry_run)

    def WriteDigestEntry(self, digest_entry, dry_run=False):
        self._write(p4runtime_pb2.Update.INSERT, "digest_entry", digest_entry, dry_run)

    def _read(self, field, message, dry_run):
        request = p4runtime_pb2.ReadRequest(device_id=self.device_id)
        getattr(request.entities.add(), field).CopyFrom(message)
        if dry_run:
            print("P4Runtime Read:", request)
            return
        yield from self.client_stub.Read(request)

    def ReadTableEntries(self, table_id=None, dry_run=False):
        return self._read("table_entry", p4runtime_pb2.TableEntry(table_id=table_id or 0),
                          dry_run)

    def ReadCounters(self, counter_id=None, index=None, dry_run=False):
        entry = p4runtime_pb2.CounterEntry(counter_id=counter_id or 0)
        if index is not None:
            entry.index.index = index
        return self._read("counter_entry", entry, dry_run)

    def PacketOut(self, payload, metadatas=()):
        packet = p4runtime_pb2.PacketOut(payload=payload)
        for number, meta in enumerate(metadatas, start=1):
            width = (meta["bitwidth"] + 7) // 8
            packet.metadata.add(metadata_id=meta.get("id", number),
                                value=meta["value"].to_bytes(width, "big"))
        self.requests.put(p4runtime_pb2.StreamMessageRequest(packet=packet))

    def PacketIn(self, dry_run=False, timeout=None):
        return self.inbox["packet"].get(timeout=timeout)

    def DigestList(self, timeout=None):
        return self.inbox["digest"].get(timeout=timeout)

    def AckDigestList(self, digest_list):
        request = p4runtime_pb2.StreamMessageRequest()
        request.digest_ack.digest_id = digest_list.digest_id
        request.digest_ack.list_id = digest_list.list_id
        self.requests.put(request)

    def IdleTimeoutNotification(self, dry_run=False, timeout=None):
        return self.inbox["idle_timeout_notification"].get(timeout=timeout)


class _RequestLog(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):
    """Appends every unary request to a file, for students to read what was sent."""

    def __init__(self, path):
        self.path = path
        open(path, "w").close()

    def _log(self, method, request):
        stamp = datetime.now(UTC).strftime("%H:%M:%S.%f")[:-3]
        with open(self.path, "a") as f:
            f.write(f"\n[{stamp}] {method}\n---\n{request}---\n")

    def intercept_unary_unary(self, continuation, details, request):
        self._log(details.method, request)
        return continuation(details, request)

    def intercept_unary_stream(self, continuation, details, request):
        self._log(details.method, request)
        return continuation(details, request)
