"""P4Runtime protocol behaviour that needs no program: capabilities, arbitration, preconditions."""

from __future__ import annotations

import json

import grpc
import pytest
from finsy.proto import U128, p4i, p4r
from test_p4rt_support import StreamClient, start_server

OK, NOT_FOUND, ALREADY_EXISTS = 0, 5, 6
Cfg = p4r.SetForwardingPipelineConfigRequest


@pytest.fixture
def server():
    srv, _ = start_server()
    yield srv
    srv.stop()


@pytest.fixture
def client(server):
    c = StreamClient(server.port)
    yield c
    c.close()


def assert_alive(server) -> None:
    c = StreamClient(server.port)
    reply = c.stub.Capabilities(p4r.CapabilitiesRequest())
    assert reply.p4runtime_api_version.startswith("1.")
    c.close()


def rpc_error(call) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        call()
    return info.value


def rpc_code(call) -> grpc.StatusCode:
    return rpc_error(call).code()


def test_capabilities(client):
    assert client.stub.Capabilities(p4r.CapabilitiesRequest()).p4runtime_api_version == "1.5.0"


def test_highest_election_id_is_primary_and_everyone_is_told(server):
    low, high = StreamClient(server.port), StreamClient(server.port)
    low.arbitrate(5)
    first = low.next_of("arbitration").arbitration
    assert first.status.code == OK and U128.decode(first.election_id) == 5
    high.arbitrate(9)
    assert high.next_of("arbitration").arbitration.status.code == OK
    demoted = low.next_of("arbitration").arbitration
    assert demoted.status.code == ALREADY_EXISTS and U128.decode(demoted.election_id) == 9
    high.close()
    orphaned = low.next_of("arbitration").arbitration  # no primary until someone bids >= 9
    assert orphaned.status.code == NOT_FOUND and U128.decode(orphaned.election_id) == 9
    low.arbitrate(6)
    assert low.next_of("arbitration").arbitration.status.code == NOT_FOUND
    low.arbitrate(9)
    assert low.next_of("arbitration").arbitration.status.code == OK
    low.close()


def test_unset_election_id_is_never_primary(server):
    observer, primary = StreamClient(server.port), StreamClient(server.port)
    observer.send(p4r.StreamMessageRequest(arbitration=p4r.MasterArbitrationUpdate(device_id=1)))
    update = observer.next_of("arbitration").arbitration
    assert update.status.code == NOT_FOUND and not update.HasField("election_id")
    primary.become_primary(1)
    assert observer.next_of("arbitration").arbitration.status.code == ALREADY_EXISTS
    observer.close()
    primary.close()


def test_a_primary_that_lowers_its_id_becomes_a_backup(server):
    a, b = StreamClient(server.port), StreamClient(server.port)
    a.become_primary(4)
    b.arbitrate(2)
    assert b.next_of("arbitration").arbitration.status.code == ALREADY_EXISTS
    a.arbitrate(3)
    assert a.next_of("arbitration").arbitration.status.code == NOT_FOUND
    assert b.next_of("arbitration").arbitration.status.code == NOT_FOUND
    a.close()
    b.close()


def test_duplicate_election_id_ends_the_stream(server):
    a, b = StreamClient(server.port), StreamClient(server.port)
    a.become_primary(3)
    b.arbitrate(3)
    err = b.next()
    assert isinstance(err, grpc.RpcError) and err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "already used" in err.details()
    a.close()
    b.close()
    assert_alive(server)


def test_arbitration_for_another_device_is_not_found(server, client):
    client.arbitrate(1, device_id=77)
    err = client.next()
    assert isinstance(err, grpc.RpcError) and err.code() == grpc.StatusCode.NOT_FOUND
    assert_alive(server)


def test_stream_must_start_with_arbitration(server, client):
    client.send(p4r.StreamMessageRequest(packet=p4r.PacketOut(payload=b"x")))
    err = client.next()
    assert isinstance(err, grpc.RpcError) and err.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert_alive(server)


def test_before_a_pipeline_writes_and_reads_fail_and_get_is_empty(server, client):
    client.become_primary(1)
    update = p4r.Update(type=p4r.Update.INSERT,
                        entity=p4r.Entity(table_entry=p4r.TableEntry(table_id=1)))
    assert rpc_code(lambda: client.write(update)) == grpc.StatusCode.FAILED_PRECONDITION
    entity = p4r.Entity(table_entry=p4r.TableEntry())
    assert rpc_code(lambda: client.read(entity)) == grpc.StatusCode.FAILED_PRECONDITION
    err = rpc_error(lambda: client.read(entity))
    assert "forwarding pipeline config" in err.details()
    get = p4r.GetForwardingPipelineConfigRequest(device_id=1)
    assert not client.stub.GetForwardingPipelineConfig(get).HasField("config")
    assert_alive(server)


def test_packet_out_before_a_pipeline_is_a_stream_error(server, client):
    client.become_primary(1)
    client.send(p4r.StreamMessageRequest(packet=p4r.PacketOut(payload=b"abc")))
    error = client.next_of("error").error
    assert error.canonical_code == grpc.StatusCode.FAILED_PRECONDITION.value[0]
    assert error.packet_out.packet_out.payload == b"abc"
    assert_alive(server)


def test_write_from_a_backup_or_without_stream_is_permission_denied(server):
    primary, backup = StreamClient(server.port), StreamClient(server.port)
    primary.become_primary(10)
    backup.arbitrate(4)
    assert backup.next_of("arbitration").arbitration.status.code == ALREADY_EXISTS
    update = p4r.Update(type=p4r.Update.INSERT,
                        entity=p4r.Entity(table_entry=p4r.TableEntry(table_id=1)))
    assert rpc_code(lambda: backup.write(update)) == grpc.StatusCode.PERMISSION_DENIED
    assert rpc_code(lambda: backup.write(update, election_id=99)) == \
        grpc.StatusCode.PERMISSION_DENIED
    primary.close()
    backup.close()
    assert_alive(server)


def test_wrong_device_id_is_not_found(server, client):
    request = p4r.ReadRequest(device_id=42, entities=[p4r.Entity(table_entry=p4r.TableEntry())])
    assert rpc_code(lambda: list(client.stub.Read(request))) == grpc.StatusCode.NOT_FOUND
    assert_alive(server)


def set_config(client, device_config: bytes, action=Cfg.VERIFY_AND_COMMIT,
               p4info=True) -> grpc.RpcError:
    config = p4r.ForwardingPipelineConfig(p4_device_config=device_config)
    if p4info:
        config.p4info.CopyFrom(p4i.P4Info())
    request = Cfg(device_id=1, election_id=U128.encode(client.election_id), config=config,
                  action=action)
    return rpc_error(lambda: client.stub.SetForwardingPipelineConfig(request))


def test_bad_configs_are_rejected_with_clear_errors(server, client):
    client.become_primary(2)
    bmv2 = json.dumps({"header_types": [], "headers": []}).encode()
    err = set_config(client, bmv2)
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "BMv2 JSON" in err.details() and "lgkit compile" in err.details()
    assert set_config(client, b"not json").code() == grpc.StatusCode.INVALID_ARGUMENT
    assert set_config(client, b"{}", p4info=False).code() == grpc.StatusCode.INVALID_ARGUMENT
    assert set_config(client, b"", Cfg.COMMIT).code() == grpc.StatusCode.FAILED_PRECONDITION
    assert set_config(client, b"{}", Cfg.UNSPECIFIED).code() == grpc.StatusCode.INVALID_ARGUMENT
    assert_alive(server)


def test_set_config_from_a_backup_is_permission_denied(server):
    primary, backup = StreamClient(server.port), StreamClient(server.port)
    primary.become_primary(8)
    backup.arbitrate(7)
    backup.next_of("arbitration")
    assert set_config(backup, b"{}").code() == grpc.StatusCode.PERMISSION_DENIED
    primary.close()
    backup.close()
    assert_alive(server)
