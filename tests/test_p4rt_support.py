"""Shared helpers for the P4Runtime tests: a raw gRPC client and a running server fixture."""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
from pathlib import Path

import grpc
from finsy.proto import U128, p4i, p4r, p4r_grpc, rpc_status
from google.protobuf import text_format

from lgkit.sw.p4runtime import P4RuntimeServer
from lgkit.sw.switch.ports import PortLoop
from lgkit.sw.switch.switch import Switch

DEVICE_ID = 1
CPU_PORT = 255
PKTIO = Path(__file__).parent / "p4" / "p4rt" / "pktio.p4"
"The P4Runtime tests' program (the fixtures in conftest.py compile it)."
PKTIO_COOKIE = 0xC0FFEE


class StreamClient:
    """A P4Runtime client with a StreamChannel whose responses are collected in a queue."""

    def __init__(self, port: int, device_id: int = DEVICE_ID) -> None:
        self.device_id = device_id
        self.channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        self.stub = p4r_grpc.P4RuntimeStub(self.channel)
        self.election_id = 0
        self._out: queue.Queue[p4r.StreamMessageRequest | None] = queue.Queue()
        self.inbox: queue.Queue[p4r.StreamMessageResponse | grpc.RpcError] = queue.Queue()
        self._stream = self.stub.StreamChannel(iter(self._out.get, None))
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        try:
            for msg in self._stream:
                self.inbox.put(msg)
        except grpc.RpcError as err:
            self.inbox.put(err)

    def send(self, msg: p4r.StreamMessageRequest) -> None:
        self._out.put(msg)

    def arbitrate(self, election_id: int, device_id: int | None = None) -> None:
        self.election_id = election_id
        update = p4r.MasterArbitrationUpdate(
            device_id=self.device_id if device_id is None else device_id,
            election_id=U128.encode(election_id))
        self.send(p4r.StreamMessageRequest(arbitration=update))

    def become_primary(self, election_id: int) -> None:
        self.arbitrate(election_id)
        assert self.next_of("arbitration").arbitration.status.code == 0

    def next(self, timeout: float = 5.0) -> p4r.StreamMessageResponse | grpc.RpcError:
        return self.inbox.get(timeout=timeout)

    def next_of(self, kind: str, timeout: float = 5.0) -> p4r.StreamMessageResponse:
        while True:
            msg = self.next(timeout)
            assert not isinstance(msg, grpc.RpcError), msg
            if msg.WhichOneof("update") == kind:
                return msg

    def write(self, *updates: p4r.Update, election_id: int | None = None) -> None:
        eid = self.election_id if election_id is None else election_id
        self.stub.Write(p4r.WriteRequest(device_id=self.device_id, updates=list(updates),
                                         election_id=U128.encode(eid)))

    def read(self, *entities: p4r.Entity) -> list[p4r.Entity]:
        request = p4r.ReadRequest(device_id=self.device_id, entities=list(entities))
        return [e for response in self.stub.Read(request) for e in response.entities]

    def close(self) -> None:
        self._out.put(None)
        self.channel.close()


def batch_errors(err: grpc.RpcError) -> list[p4r.Error]:
    """The per-update p4.v1.Error details of a failed Write batch."""
    assert err.code() == grpc.StatusCode.UNKNOWN, err
    for key, value in err.trailing_metadata():
        if key == "grpc-status-details-bin":
            status = rpc_status.Status.FromString(value)
            errors = []
            for detail in status.details:
                error = p4r.Error()
                assert detail.Unpack(error)
                errors.append(error)
            return errors
    raise AssertionError("no grpc-status-details-bin in a failed Write")


def start_server(cpu_port: int | None = CPU_PORT) -> tuple[P4RuntimeServer, Switch]:
    switch = Switch(device_id=DEVICE_ID, cpu_port=cpu_port)
    server = P4RuntimeServer(switch, address="127.0.0.1:0")
    server.start()
    return server, switch


class RunningSwitch:
    """A real Switch with its event loop in a thread, capture ports and a P4Runtime server."""

    def __init__(self, ports: tuple[int, ...] = (1, 2), cpu_port: int = CPU_PORT) -> None:
        self.server, self.switch = start_server(cpu_port)
        self.ports = {port: CapturePort() for port in ports}
        for port, backend in self.ports.items():
            self.switch.add_port(port, backend)
        self.loop = PortLoop(self.switch)
        self._thread = threading.Thread(target=self.loop.run, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return self.server.port

    def inject(self, port: int, frame: bytes) -> None:
        """A frame arrives on `port` (handled on the switch's loop thread via its clock)."""
        self.switch.clock.call_later(0, self.switch.receive, port, frame)

    def stop(self) -> None:
        self.server.stop()
        self.loop.stop()
        self._thread.join(timeout=5)
        self.loop.close()


class CapturePort:
    """A port backend that keeps the frames the switch sends."""

    def __init__(self) -> None:
        self.frames: queue.Queue[bytes] = queue.Queue()

    def send(self, data: bytes) -> None:
        self.frames.put(data)


def compile_program(program: Path, out: Path) -> tuple[Path, Path]:
    """`lgkit compile PROGRAM --out OUT`: the P4Info text file and the device config JSON."""
    lgkit = Path(sys.executable).parent / "lgkit"
    subprocess.run([str(lgkit), "compile", str(program), "--out", str(out)], check=True,
                   capture_output=True, timeout=60)
    return out / f"{program.stem}.p4info.txt", out / f"{program.stem}.json"


def forwarding_config(p4info_path: Path, device_config_path: Path,
                      cookie: int = 0) -> p4r.ForwardingPipelineConfig:
    config = p4r.ForwardingPipelineConfig(p4_device_config=device_config_path.read_bytes())
    text_format.Parse(p4info_path.read_text(), config.p4info)
    if cookie:
        config.cookie.cookie = cookie
    return config


def set_pipeline(client: StreamClient, config: p4r.ForwardingPipelineConfig,
                 action: int = p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT) -> None:
    client.stub.SetForwardingPipelineConfig(p4r.SetForwardingPipelineConfigRequest(
        device_id=client.device_id, election_id=U128.encode(client.election_id),
        config=config, action=action))


class Names:
    """P4Info ids by name, for building requests in tests."""

    def __init__(self, p4info: p4i.P4Info) -> None:
        self.p4info = p4info
        self.ids: dict[str, int] = {}
        for kind in ("tables", "actions", "counters", "direct_counters", "meters",
                     "registers", "digests"):
            for obj in getattr(p4info, kind):
                self.ids[obj.preamble.name] = obj.preamble.id
        self.fields = {(t.preamble.name, f.name): f.id
                       for t in p4info.tables for f in t.match_fields}
        self.headers = {h.preamble.name: {m.name: m.id for m in h.metadata}
                        for h in p4info.controller_packet_metadata}

    def __getitem__(self, name: str) -> int:
        return self.ids[name]

    def field(self, table: str, name: str) -> int:
        return self.fields[(table, name)]
