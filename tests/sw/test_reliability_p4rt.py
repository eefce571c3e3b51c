"""Reliability of the P4Runtime server: streams do not starve unary RPCs, big or failing Write
batches keep the per-update status contract within gRPC's metadata limit, oversized requests
are refused before they cost memory, and a program that cannot load is INVALID_ARGUMENT."""

from __future__ import annotations

import subprocess
import sys
import time

import grpc
import pytest
from finsy.proto import U128, p4r, rpc_status
from test_p4rt_entities import MAC_A, dmac, update
from test_p4rt_support import StreamClient, batch_errors, set_pipeline, start_server

from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.p4runtime import service as service_module
from lgkit.sw.p4runtime.errors import (
    DETAILS_BUDGET_BYTES,
    MAX_MESSAGE_CHARS,
    MAX_WRITE_UPDATES,
    BatchStatus,
    P4RTError,
)
from lgkit.sw.p4runtime.server import MAX_WRITE_BYTES

INSERT = p4r.Update.INSERT
CODE = {code.value[0]: code for code in grpc.StatusCode}


@pytest.fixture
def server():
    srv, _ = start_server()
    yield srv
    srv.stop()


def _capabilities_within(port: int, seconds: float) -> None:
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    stub = service_module.p4r_grpc.P4RuntimeStub(channel)
    stub.Capabilities(p4r.CapabilitiesRequest(), timeout=seconds)
    channel.close()


def test_many_open_streams_leave_unary_rpcs_served(server):
    """The old server gave each stream one of 32 pool threads: 40 streams starved everything."""
    clients = [StreamClient(server.port) for _ in range(40)]
    for i, client in enumerate(clients):
        client.arbitrate(100 + i)
    for client in clients:
        client.next_of("arbitration")
    # starved meant never answered: 5 s leaves room for a busy machine
    _capabilities_within(server.port, 5.0)
    clients[-1].stub.GetForwardingPipelineConfig(
        p4r.GetForwardingPipelineConfigRequest(device_id=1), timeout=5.0)
    for client in clients:
        client.close()


def test_streams_beyond_the_limit_are_resource_exhausted(server, monkeypatch):
    monkeypatch.setattr(service_module, "MAX_STREAMS", 2)
    first, second = StreamClient(server.port), StreamClient(server.port)
    first.arbitrate(1)
    second.arbitrate(2)
    assert first.next_of("arbitration") and second.next_of("arbitration")
    # opened only now: streams opened together reach the server in any order
    third = StreamClient(server.port)
    third.arbitrate(3)
    refused = third.next()
    assert isinstance(refused, grpc.RpcError)
    assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "at most 2 streams" in refused.details()
    _capabilities_within(server.port, 1.0)
    for client in (first, second, third):
        client.close()


def _failing_inserts(names, count: int) -> list[p4r.Update]:
    """Inserts of `count` distinct keys with an unknown action: each fails INVALID_ARGUMENT."""
    updates = []
    for i in range(count):
        entry = dmac(names, (i + 1).to_bytes(6, "big"))
        entry.action.action.action_id = 12345
        updates.append(update(INSERT, table_entry=entry))
    return updates


def test_a_failing_batch_of_1000_keeps_a_status_a_default_client_reads(rig, names):
    """1000 per-update Errors (~39 KB) cannot fit 8 KiB of metadata: BMv2 sends them all and
    its clients see RESOURCE_EXHAUSTED; the kit's details cover a prefix of the batch."""
    _, client = rig
    good = update(INSERT, table_entry=dmac(names, MAC_A))
    updates = [good, *_failing_inserts(names, 999)]
    with pytest.raises(grpc.RpcError) as info:
        client.write(*updates)  # a plain grpcio channel: 8 KiB metadata limit
    errors = batch_errors(info.value)
    covered = len(errors)
    assert 100 < covered < 1000
    assert [CODE[e.canonical_code] for e in errors] == \
        [grpc.StatusCode.OK] + [grpc.StatusCode.INVALID_ARGUMENT] * (covered - 1)
    assert "action" in errors[1].message  # the first failures keep their messages
    assert info.value.details().startswith(
        f"999 of 1000 updates failed; details cover updates 0..{covered - 1} only "
        f"(gRPC's 8 KiB metadata limit), {1000 - covered} failed after them, the first is "
        f"update {covered}: INVALID_ARGUMENT: ")
    assert "action" in info.value.details()
    details = dict(info.value.trailing_metadata())["grpc-status-details-bin"]
    assert len(details) <= DETAILS_BUDGET_BYTES
    read = client.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=names["PktIngress.dmac"])))
    assert len(read) == 1  # the good update was applied


@pytest.mark.parametrize("count", [2, 50, 160, 200, 400, 1000, MAX_WRITE_UPDATES])
@pytest.mark.parametrize("text", ["x", "\u20ac"])
def test_batch_status_fits_the_budget_and_covers_a_prefix(count, text):
    """Every size of batch, with the longest messages (3 bytes a character), fits the budget;
    the details are one Error per update of a prefix, all of it when it fits."""
    results = [None if i % 3 == 0 else P4RTError(grpc.StatusCode.INVALID_ARGUMENT, text * 5000)
               for i in range(count)]
    status = BatchStatus(results)
    [(_, details)] = status.trailing_metadata
    assert len(details) <= DETAILS_BUDGET_BYTES
    decoded = rpc_status.Status.FromString(details)
    errors = [p4r.Error() for _ in decoded.details]
    assert all(d.Unpack(e) for d, e in zip(decoded.details, errors, strict=True))
    assert [e.canonical_code for e in errors] == \
        [0 if r is None else 3 for r in results[:len(errors)]]
    assert (len(errors) == count) == (count <= 160)
    assert min(count, 100) <= len(errors) and errors[1].message.startswith(text * 10)
    assert status.details.startswith(f"{count - count // 3 - (count % 3 > 0)} of {count} ")


def test_a_batch_over_the_limit_is_refused_whole(rig, names):
    _, client = rig
    updates = [update(INSERT, table_entry=dmac(names, (i + 1).to_bytes(6, "big")))
               for i in range(MAX_WRITE_UPDATES + 1)]
    with pytest.raises(grpc.RpcError) as info:
        client.write(*updates)
    assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert f"at most {MAX_WRITE_UPDATES} updates" in info.value.details()
    read = client.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=names["PktIngress.dmac"])))
    assert read == []  # nothing applied
    client.write(*updates[:2])  # smaller batches still work


def test_a_program_that_compiles_but_cannot_load_is_invalid_argument(rig, config,
                                                                      monkeypatch):
    _, client = rig

    def too_deep(program):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(Pipeline, "load", staticmethod(too_deep))
    with pytest.raises(grpc.RpcError) as info:
        set_pipeline(client, config)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert info.value.details() == ("the device config's program cannot be loaded: "
                                    "RecursionError: maximum recursion depth exceeded")
    monkeypatch.undo()
    set_pipeline(client, config)  # the server goes on serving


SERVER_PROCESS = """
import sys, time
from lgkit.sw.switch.switch import Switch
from lgkit.sw.p4runtime.server import P4RuntimeServer
server = P4RuntimeServer(Switch(device_id=1), "127.0.0.1:0")
server.start()
print(server.port, flush=True)
sys.stdin.read()
"""


def _rss_mb(pid: int) -> float:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.slow
def test_huge_write_requests_do_not_grow_the_server():
    """A 600k-update batch once lifted the server from 56 MB to 1.5 GB."""
    proc = subprocess.Popen([sys.executable, "-c", SERVER_PROCESS], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        channel = grpc.insecure_channel(f"127.0.0.1:{port}",
                                        options=[("grpc.max_send_message_length", 1 << 30)])
        stub = service_module.p4r_grpc.P4RuntimeStub(channel)
        stub.Capabilities(p4r.CapabilitiesRequest())
        before = _rss_mb(proc.pid)
        entry = p4r.TableEntry(table_id=1)
        entry.match.add(field_id=1).exact.value = b"\x00\x00\x00\x00\x00\x01"
        one = p4r.Update(type=INSERT, entity=p4r.Entity(table_entry=entry))
        for count, code, what in [
                (600_000, grpc.StatusCode.RESOURCE_EXHAUSTED, f"at most {MAX_WRITE_BYTES}"),
                (MAX_WRITE_BYTES // one.ByteSize() + 10, grpc.StatusCode.RESOURCE_EXHAUSTED,
                 f"at most {MAX_WRITE_BYTES}"),
                (MAX_WRITE_UPDATES + 1, grpc.StatusCode.RESOURCE_EXHAUSTED,
                 f"at most {MAX_WRITE_UPDATES} updates")]:
            request = p4r.WriteRequest(device_id=1, election_id=U128.encode(1),
                                       updates=[one] * count)
            with pytest.raises(grpc.RpcError) as info:
                stub.Write(request, timeout=120)
            assert info.value.code() == code and what in info.value.details(), info.value
        time.sleep(0.5)
        grown = _rss_mb(proc.pid) - before
        print(f"server RSS {before:.0f} MB, grown by {grown:.1f} MB after huge Writes")
        assert grown < 60
        stub.Capabilities(p4r.CapabilitiesRequest(), timeout=5)
        channel.close()
    finally:
        proc.kill()
        proc.wait()


def test_a_read_with_a_huge_key_is_invalid_argument_with_a_short_message(rig, names):
    """A 9 kB key was echoed whole: the status outgrew a default client's 8 KiB of metadata
    and the client saw RESOURCE_EXHAUSTED instead of INVALID_ARGUMENT."""
    _, client = rig
    entry = dmac(names, b"\x01" * 9000)
    channel = grpc.insecure_channel(f"127.0.0.1:{rig[0].port}",
                                    options=[("grpc.max_metadata_size", 8192)])
    stub = service_module.p4r_grpc.P4RuntimeStub(channel)
    with pytest.raises(grpc.RpcError) as info:
        list(stub.Read(p4r.ReadRequest(device_id=1, entities=[p4r.Entity(table_entry=entry)]),
                       timeout=10))
    channel.close()
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert info.value.details() == (
        "match field hdr.ethernet.dstAddr: value 0x0101010101010101...0101010101010101 "
        "(9000 bytes) does not fit in 48 bits")


def test_every_error_message_is_bounded():
    message = P4RTError(grpc.StatusCode.INVALID_ARGUMENT, "name " + "x" * 100_000 + " END").message
    assert len(message) <= MAX_MESSAGE_CHARS
    assert message.startswith("name xxx") and message.endswith("xxx END")
    assert " ...(99057 characters cut)... " in message
    assert P4RTError(grpc.StatusCode.NOT_FOUND, "short").message == "short"
