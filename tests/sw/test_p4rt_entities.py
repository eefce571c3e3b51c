"""P4Runtime entities on a real switch running tests/p4/p4rt/pktio.p4: writes, reads, errors."""

from __future__ import annotations

import time

import grpc
import pytest
from finsy.proto import U128, p4d, p4r
from test_p4rt_support import (
    CPU_PORT,
    PKTIO,
    PKTIO_COOKIE,
    Names,
    RunningSwitch,
    StreamClient,
    batch_errors,
    set_pipeline,
)

from lgkit.sw.exec.pipeline import MAX_HELD_DIGESTS
from lgkit.sw.switch.loader import load_program

Cfg = p4r.SetForwardingPipelineConfigRequest
GetCfg = p4r.GetForwardingPipelineConfigRequest
INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE
CODE = {code.value[0]: code for code in grpc.StatusCode}
MAC_A = bytes.fromhex("0000000000aa")
MAC_B = bytes.fromhex("0000000000bb")


def frame(dst: bytes, src: bytes, ether_type: int, size: int = 64) -> bytes:
    head = dst + src + ether_type.to_bytes(2, "big")
    return head + bytes(size - len(head))


def entry(names: Names, table: str, action: str | None = None, params=(), match=(),
          priority: int = 0, default: bool = False) -> p4r.TableEntry:
    msg = p4r.TableEntry(table_id=names[table], priority=priority, is_default_action=default)
    for field in match:
        msg.match.append(field)
    if action is not None:
        msg.action.action.action_id = names[action]
        for param_id, value in params:
            msg.action.action.params.append(p4r.Action.Param(param_id=param_id, value=value))
    return msg


def exact(names: Names, table: str, field: str, value: bytes) -> p4r.FieldMatch:
    return p4r.FieldMatch(field_id=names.field(table, field),
                          exact=p4r.FieldMatch.Exact(value=value))


def dmac(names: Names, mac: bytes, port: bytes = b"\x01", action="PktIngress.set_port"):
    match = [exact(names, "PktIngress.dmac", "hdr.ethernet.dstAddr", mac)]
    params = [(1, port)] if action == "PktIngress.set_port" else []
    return entry(names, "PktIngress.dmac", action, params, match)


def update(kind: int, **entity) -> p4r.Update:
    return p4r.Update(type=kind, entity=p4r.Entity(**entity))


def write_error(client: StreamClient, *updates: p4r.Update) -> list[grpc.StatusCode]:
    """Codes of the per-update errors of a failed batch (OK for updates that succeeded)."""
    with pytest.raises(grpc.RpcError) as info:
        client.write(*updates)
    return [CODE[e.canonical_code] for e in batch_errors(info.value)]


def read_tables(client: StreamClient, table_id: int = 0, **fields) -> list[p4r.TableEntry]:
    found = client.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=table_id, **fields)))
    return [e.table_entry for e in found]


def test_get_config_response_types(rig, config):
    _, client = rig
    def get(kind):
        return client.stub.GetForwardingPipelineConfig(
            GetCfg(device_id=1, response_type=kind)).config
    full = get(GetCfg.ALL)
    assert full.p4info == config.p4info and full.p4_device_config == config.p4_device_config
    assert full.cookie.cookie == PKTIO_COOKIE
    cookie = get(GetCfg.COOKIE_ONLY)
    assert cookie.cookie.cookie == PKTIO_COOKIE
    assert not cookie.HasField("p4info") and not cookie.p4_device_config
    info = get(GetCfg.P4INFO_AND_COOKIE)
    assert info.p4info == config.p4info and not info.p4_device_config
    device = get(GetCfg.DEVICE_CONFIG_AND_COOKIE)
    assert device.p4_device_config == config.p4_device_config and not device.HasField("p4info")


def test_table_entry_lifecycle_and_canonical_bytes(rig, names):
    running, client = rig
    padded = b"\x00" + MAC_A  # 7 bytes with a leading zero: accepted, read back canonical
    client.write(update(INSERT, table_entry=dmac(names, padded, b"\x00\x02")))
    [got] = read_tables(client, names["PktIngress.dmac"])
    assert got.match[0].exact.value == b"\xaa"
    assert got.action.action.params[0].value == b"\x02"
    assert sorted(e.table_id for e in read_tables(client)) == \
        sorted([names["PktIngress.dmac"], names["PktIngress.fixed"]])
    one = read_tables(client, names["PktIngress.dmac"],
                      match=[exact(names, "PktIngress.dmac", "hdr.ethernet.dstAddr", MAC_A)])
    assert len(one) == 1
    running.inject(1, frame(MAC_A, MAC_B, 0x0800))
    assert running.ports[2].frames.get(timeout=5)[:6] == MAC_A
    client.write(update(MODIFY, table_entry=dmac(names, MAC_A, b"\x01")))
    [got] = read_tables(client, names["PktIngress.dmac"])
    assert got.action.action.params[0].value == b"\x01"
    client.write(update(DELETE, table_entry=dmac(names, MAC_A, action=None)))
    assert read_tables(client, names["PktIngress.dmac"]) == []


def test_const_table_entries_are_readable(rig, names):
    _, client = rig
    [const] = read_tables(client, names["PktIngress.fixed"])
    assert const.match[0].exact.value == b"\x08\x01"
    assert const.action.action.action_id == names["PktIngress.set_tag"]


def test_bad_table_writes_each_get_the_spec_code(rig, names):
    _, client = rig
    client.write(update(INSERT, table_entry=dmac(names, MAC_A)))
    t_dmac, t_acl = "PktIngress.dmac", "PktIngress.acl"
    no_match = entry(names, t_dmac, "PktIngress.set_port", [(1, b"\x01")])
    wrong_action = dmac(names, MAC_B, action="PktIngress.set_tag")
    wrong_action.action.action.params.append(p4r.Action.Param(param_id=1, value=b"\x01"))
    missing_param = dmac(names, MAC_B)
    del missing_param.action.action.params[:]
    with_priority = dmac(names, MAC_B)
    with_priority.priority = 5
    acl_match = [p4r.FieldMatch(field_id=names.field(t_acl, "hdr.ethernet.etherType"),
                                ternary=p4r.FieldMatch.Ternary(value=b"\x08\x00",
                                                               mask=b"\xff\xff"))]
    acl_no_priority = entry(names, t_acl, "NoAction", match=acl_match)
    outside_mask = [p4r.FieldMatch(field_id=names.field(t_acl, "hdr.ethernet.etherType"),
                                   ternary=p4r.FieldMatch.Ternary(value=b"\x08\x01",
                                                                  mask=b"\xff\x00"))]
    profile = dmac(names, MAC_B)
    profile.action.action_profile_member_id = 1
    fixed = entry(names, "PktIngress.fixed", "NoAction",
                  match=[exact(names, "PktIngress.fixed", "hdr.ethernet.etherType", b"\x09")])
    fixed_const = entry(names, "PktIngress.fixed", "NoAction", match=[
        exact(names, "PktIngress.fixed", "hdr.ethernet.etherType", b"\x08\x01")])
    marked_const = dmac(names, MAC_B)
    marked_const.is_const = True
    with_timeout = dmac(names, MAC_B)
    with_timeout.idle_timeout_ns = 10**9
    const_default = entry(names, "PktIngress.tagger", "NoAction", default=True)
    cases = [
        (update(INSERT, table_entry=dmac(names, MAC_A)), grpc.StatusCode.ALREADY_EXISTS),
        (update(MODIFY, table_entry=dmac(names, MAC_B)), grpc.StatusCode.NOT_FOUND),
        (update(DELETE, table_entry=dmac(names, MAC_B)), grpc.StatusCode.NOT_FOUND),
        (update(INSERT, table_entry=p4r.TableEntry(table_id=0x02FFFFFF)),
         grpc.StatusCode.NOT_FOUND),
        (update(INSERT, table_entry=dmac(names, b"\x01" + MAC_A)),
         grpc.StatusCode.INVALID_ARGUMENT),
        (update(INSERT, table_entry=dmac(names, MAC_B, b"\x02\x00")),
         grpc.StatusCode.INVALID_ARGUMENT),
        (update(INSERT, table_entry=dmac(names, b"")), grpc.StatusCode.INVALID_ARGUMENT),
        (update(INSERT, table_entry=no_match), grpc.StatusCode.INVALID_ARGUMENT),
        (update(INSERT, table_entry=wrong_action), grpc.StatusCode.INVALID_ARGUMENT),
        (update(INSERT, table_entry=missing_param), grpc.StatusCode.INVALID_ARGUMENT),
        (update(INSERT, table_entry=with_priority), grpc.StatusCode.INVALID_ARGUMENT),
        (update(INSERT, table_entry=acl_no_priority), grpc.StatusCode.INVALID_ARGUMENT),
        (update(INSERT, table_entry=entry(names, t_acl, "NoAction", match=outside_mask,
                                          priority=1)), grpc.StatusCode.INVALID_ARGUMENT),
        (update(INSERT, table_entry=profile), grpc.StatusCode.INVALID_ARGUMENT),
        (update(INSERT, table_entry=fixed), grpc.StatusCode.PERMISSION_DENIED),
        (update(MODIFY, table_entry=fixed_const), grpc.StatusCode.PERMISSION_DENIED),
        (update(DELETE, table_entry=fixed_const), grpc.StatusCode.PERMISSION_DENIED),
        (update(INSERT, table_entry=marked_const), grpc.StatusCode.INVALID_ARGUMENT),
        (update(INSERT, table_entry=with_timeout), grpc.StatusCode.INVALID_ARGUMENT),
        (update(MODIFY, table_entry=const_default), grpc.StatusCode.PERMISSION_DENIED),
        (update(INSERT, table_entry=entry(names, t_dmac, "NoAction", default=True)),
         grpc.StatusCode.INVALID_ARGUMENT),
        (p4r.Update(type=INSERT), grpc.StatusCode.INVALID_ARGUMENT),
        (p4r.Update(type=p4r.Update.UNSPECIFIED,
                    entity=p4r.Entity(table_entry=dmac(names, MAC_B))),
         grpc.StatusCode.INVALID_ARGUMENT),
        (update(INSERT, value_set_entry=p4r.ValueSetEntry(value_set_id=1)),
         grpc.StatusCode.INVALID_ARGUMENT),  # value sets are only modified
        (update(INSERT, extern_entry=p4r.ExternEntry(extern_type_id=1)),
         grpc.StatusCode.UNIMPLEMENTED),
    ]
    for bad, code in cases:
        assert write_error(client, bad) == [code], bad
        assert len(read_tables(client, names[t_dmac])) == 1  # still serving, state unchanged


def test_batch_reports_every_update_and_applies_the_good_ones(rig, names):
    _, client = rig
    client.write(update(INSERT, table_entry=dmac(names, MAC_A)))
    codes = write_error(client, update(INSERT, table_entry=dmac(names, MAC_B)),
                        update(INSERT, table_entry=dmac(names, MAC_A)))
    assert codes == [grpc.StatusCode.OK, grpc.StatusCode.ALREADY_EXISTS]
    assert len(read_tables(client, names["PktIngress.dmac"])) == 2


def test_full_table_is_resource_exhausted(rig, names):
    _, client = rig
    for i in range(4):
        client.write(update(INSERT, table_entry=dmac(names, bytes([i + 1]))))
    assert write_error(client, update(INSERT, table_entry=dmac(names, b"\x09"))) == \
        [grpc.StatusCode.RESOURCE_EXHAUSTED]


def test_rollback_atomicity_is_unimplemented(rig, names):
    _, client = rig
    request = p4r.WriteRequest(device_id=1, election_id=U128.encode(10),
                               atomicity=p4r.WriteRequest.ROLLBACK_ON_ERROR,
                               updates=[update(INSERT, table_entry=dmac(names, MAC_A))])
    with pytest.raises(grpc.RpcError) as info:
        client.stub.Write(request)
    assert info.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_default_action_modify_and_reset(rig, names):
    running, client = rig
    default = entry(names, "PktIngress.dmac", "PktIngress.set_port", [(1, b"\x02")],
                    default=True)
    client.write(update(MODIFY, table_entry=default))
    [got] = read_tables(client, names["PktIngress.dmac"], is_default_action=True)
    assert got.is_default_action and got.action.action.params[0].value == b"\x02"
    running.inject(1, frame(MAC_B, MAC_A, 0x0800))
    assert running.ports[2].frames.get(timeout=5)[:6] == MAC_B
    client.write(update(MODIFY, table_entry=entry(names, "PktIngress.dmac", default=True)))
    [got] = read_tables(client, names["PktIngress.dmac"], is_default_action=True)
    assert got.action.action.action_id == names["PktIngress.drop"]


def acl_entry(names: Names, ether_type: bytes, priority: int, port: bytes):
    match = [p4r.FieldMatch(field_id=names.field("PktIngress.acl", "hdr.ethernet.etherType"),
                            ternary=p4r.FieldMatch.Ternary(value=ether_type, mask=b"\xff\xff"))]
    return entry(names, "PktIngress.acl", "PktIngress.set_port", [(1, port)], match, priority)


def test_ternary_priorities_and_direct_counter(rig, names):
    running, client = rig
    client.write(update(INSERT, table_entry=acl_entry(names, b"\x08\x00", 10, b"\x01")),
                 update(INSERT, table_entry=acl_entry(names, b"\x08\x00", 20, b"\x02")))
    got = read_tables(client, names["PktIngress.acl"])
    assert sorted(e.priority for e in got) == [10, 20]
    [high] = read_tables(client, names["PktIngress.acl"], priority=20)
    assert high.action.action.params[0].value == b"\x02"
    by_action = p4r.TableAction(action=p4r.Action(action_id=names["PktIngress.drop"]))
    assert read_tables(client, names["PktIngress.acl"], action=by_action) == []
    running.inject(1, frame(MAC_A, MAC_B, 0x0800, size=100))
    assert len(running.ports[2].frames.get(timeout=5)) == 100
    counters = client.read(p4r.Entity(direct_counter_entry=p4r.DirectCounterEntry(
        table_entry=p4r.TableEntry(table_id=names["PktIngress.acl"]))))
    data = {c.direct_counter_entry.table_entry.priority: c.direct_counter_entry.data
            for c in counters}
    assert (data[20].packet_count, data[20].byte_count) == (1, 100)
    assert data[10].packet_count == 0
    with_data = read_tables(client, names["PktIngress.acl"], counter_data=p4r.CounterData())
    assert {e.priority: e.counter_data.packet_count for e in with_data} == {10: 0, 20: 1}
    reset = p4r.DirectCounterEntry(table_entry=acl_entry(names, b"\x08\x00", 20, b"\x02"))
    reset.table_entry.ClearField("action")
    client.write(update(MODIFY, direct_counter_entry=reset))
    with_data = read_tables(client, names["PktIngress.acl"], counter_data=p4r.CounterData())
    assert all(e.counter_data.packet_count == 0 for e in with_data)


def test_range_match_entry(rig, names):
    _, client = rig
    match = [p4r.FieldMatch(field_id=names.field("PktIngress.tagger", "sm.ingress_port"),
                            range=p4r.FieldMatch.Range(low=b"\x01", high=b"\x05"))]
    tagged = entry(names, "PktIngress.tagger", "PktIngress.set_tag", [(1, b"\x03")], match, 1)
    client.write(update(INSERT, table_entry=tagged))
    [got] = read_tables(client, names["PktIngress.tagger"])
    assert (got.match[0].range.low, got.match[0].range.high) == (b"\x01", b"\x05")
    full = [p4r.FieldMatch(field_id=names.field("PktIngress.tagger", "sm.ingress_port"),
                           range=p4r.FieldMatch.Range(low=b"\x00", high=b"\x01\xff"))]
    dont_care = entry(names, "PktIngress.tagger", "NoAction", match=full, priority=2)
    assert write_error(client, update(INSERT, table_entry=dont_care)) == \
        [grpc.StatusCode.INVALID_ARGUMENT]


def test_counters_registers_and_meters(rig, names):
    running, client = rig
    client.write(update(INSERT, table_entry=dmac(names, MAC_A, b"\x02")))
    for _ in range(3):
        running.inject(1, frame(MAC_A, MAC_B, 0x0800, size=80))
    for _ in range(3):
        running.ports[2].frames.get(timeout=5)
    counter_id = names["PktIngress.port_counter"]
    all_cells = client.read(p4r.Entity(counter_entry=p4r.CounterEntry(counter_id=counter_id)))
    assert len(all_cells) == 512
    [cell] = client.read(p4r.Entity(counter_entry=p4r.CounterEntry(
        counter_id=counter_id, index=p4r.Index(index=1))))
    assert (cell.counter_entry.data.packet_count, cell.counter_entry.data.byte_count) == (3, 240)
    with pytest.raises(grpc.RpcError) as info:
        client.read(p4r.Entity(counter_entry=p4r.CounterEntry(
            counter_id=counter_id, index=p4r.Index(index=512))))
    assert info.value.code() == grpc.StatusCode.OUT_OF_RANGE

    register_id = names["PktIngress.last_len"]
    def register(index):
        [reg] = client.read(p4r.Entity(register_entry=p4r.RegisterEntry(
            register_id=register_id, index=p4r.Index(index=index))))
        return reg.register_entry.data.bitstring
    assert register(1) == bytes([80])
    client.write(update(MODIFY, register_entry=p4r.RegisterEntry(
        register_id=register_id, index=p4r.Index(index=3),
        data=p4d.P4Data(bitstring=b"\x01\x02\x03"))))
    assert register(3) == b"\x01\x02\x03"
    too_wide = p4r.RegisterEntry(register_id=register_id, index=p4r.Index(index=3),
                                 data=p4d.P4Data(bitstring=b"\x01\x00\x00\x00\x00"))
    assert write_error(client, update(MODIFY, register_entry=too_wide)) == \
        [grpc.StatusCode.INVALID_ARGUMENT]
    assert write_error(client, update(INSERT, register_entry=too_wide)) == \
        [grpc.StatusCode.INVALID_ARGUMENT]

    meter_id = names["PktIngress.port_meter"]
    config = p4r.MeterConfig(cir=100, cburst=10, pir=200, pburst=20)
    client.write(update(MODIFY, meter_entry=p4r.MeterEntry(
        meter_id=meter_id, index=p4r.Index(index=2), config=config)))
    [meter] = client.read(p4r.Entity(meter_entry=p4r.MeterEntry(
        meter_id=meter_id, index=p4r.Index(index=2))))
    assert meter.meter_entry.config == config
    bad = p4r.MeterConfig(cir=300, cburst=10, pir=200, pburst=20)
    assert write_error(client, update(MODIFY, meter_entry=p4r.MeterEntry(
        meter_id=meter_id, index=p4r.Index(index=2), config=bad))) == \
        [grpc.StatusCode.INVALID_ARGUMENT]


def replica(port: int, instance: int) -> p4r.Replica:
    return p4r.Replica(port=port.to_bytes(2, "big"), instance=instance)


def pre(**entry) -> p4r.PacketReplicationEngineEntry:
    return p4r.PacketReplicationEngineEntry(**entry)


def test_clone_sessions_and_multicast_groups(rig):
    running, client = rig
    clone = p4r.CloneSessionEntry(session_id=5, replicas=[replica(2, 1)])
    group = p4r.MulticastGroupEntry(multicast_group_id=1,
                                    replicas=[replica(1, 1), replica(2, 0), replica(2, 1)])
    client.write(update(INSERT, packet_replication_engine_entry=pre(clone_session_entry=clone)),
                 update(INSERT, packet_replication_engine_entry=pre(multicast_group_entry=group)))
    pipeline = running.switch.pipeline
    assert pipeline.clone_sessions[5] == [(2, 1)]
    assert pipeline.mc_groups[1] == [(1, 1), (1, 2), (0, 2)]
    groups = client.read(p4r.Entity(packet_replication_engine_entry=pre(
        multicast_group_entry=p4r.MulticastGroupEntry())))
    assert [g.packet_replication_engine_entry.multicast_group_entry.multicast_group_id
            for g in groups] == [1]
    [session] = client.read(p4r.Entity(packet_replication_engine_entry=pre(
        clone_session_entry=p4r.CloneSessionEntry(session_id=5))))
    assert session.packet_replication_engine_entry.clone_session_entry.replicas[0].port == b"\x02"
    bad_cases = [
        (INSERT, pre(clone_session_entry=p4r.CloneSessionEntry(session_id=512)),
         grpc.StatusCode.OUT_OF_RANGE),
        (INSERT, pre(clone_session_entry=p4r.CloneSessionEntry(session_id=6, class_of_service=1)),
         grpc.StatusCode.UNIMPLEMENTED),
        (INSERT, pre(clone_session_entry=p4r.CloneSessionEntry(session_id=7,
                                                               packet_length_bytes=64)),
         grpc.StatusCode.UNIMPLEMENTED),
        (INSERT, pre(clone_session_entry=clone), grpc.StatusCode.ALREADY_EXISTS),
        (INSERT, pre(multicast_group_entry=p4r.MulticastGroupEntry(
            multicast_group_id=2, replicas=[replica(1, 0), replica(1, 0)])),
         grpc.StatusCode.INVALID_ARGUMENT),
        (INSERT, pre(multicast_group_entry=p4r.MulticastGroupEntry(multicast_group_id=32768)),
         grpc.StatusCode.OUT_OF_RANGE),
        (DELETE, pre(multicast_group_entry=p4r.MulticastGroupEntry(multicast_group_id=9)),
         grpc.StatusCode.NOT_FOUND),
    ]
    for kind, bad, code in bad_cases:
        assert write_error(client, update(kind, packet_replication_engine_entry=bad)) == [code]
    client.write(update(DELETE, packet_replication_engine_entry=pre(multicast_group_entry=group)))
    assert 1 not in pipeline.mc_groups


def packet_out(names: Names, payload: bytes, **metadata: int) -> p4r.StreamMessageRequest:
    ids = names.headers["packet_out"]
    msg = p4r.PacketOut(payload=payload, metadata=[
        p4r.PacketMetadata(metadata_id=ids[name], value=value.to_bytes(2, "big"))
        for name, value in metadata.items()])
    return p4r.StreamMessageRequest(packet=msg)


def test_packet_out_to_a_port_and_back_to_the_cpu(rig, names):
    running, client = rig
    payload = frame(MAC_A, MAC_B, 0x0800)
    client.send(packet_out(names, payload, egress_port=1, tag=5, pad=0))
    assert running.ports[1].frames.get(timeout=5) == payload
    client.send(packet_out(names, payload, egress_port=CPU_PORT, tag=5, pad=0))
    packet_in = client.next_of("packet").packet
    assert packet_in.payload == payload
    ids = names.headers["packet_in"]
    meta = {m.metadata_id: m.value for m in packet_in.metadata}
    assert meta == {ids["ingress_port"]: bytes([CPU_PORT]), ids["tag"]: b"\x06",
                    ids["pad"]: b"\x00"}


def test_frames_to_the_cpu_port_become_packet_ins(rig, names):
    running, client = rig
    payload = frame(MAC_A, MAC_B, 0x88B6)
    running.inject(2, payload)
    packet_in = client.next_of("packet").packet
    ids = names.headers["packet_in"]
    meta = {m.metadata_id: m.value for m in packet_in.metadata}
    assert meta[ids["ingress_port"]] == b"\x02" and meta[ids["tag"]] == b"\x07"
    assert packet_in.payload == payload


def test_bad_packet_outs_are_stream_errors(rig, names, config):
    running, client = rig
    client.send(packet_out(names, b"x" * 20, egress_port=1))
    error = client.next_of("error").error
    assert CODE[error.canonical_code] == grpc.StatusCode.INVALID_ARGUMENT
    client.send(packet_out(names, b"x" * 20, egress_port=1, tag=0x1FF, pad=0))
    assert CODE[client.next_of("error").error.canonical_code] == \
        grpc.StatusCode.INVALID_ARGUMENT
    backup = StreamClient(running.port)
    backup.arbitrate(3)
    backup.next_of("arbitration")
    backup.send(packet_out(names, b"x" * 20, egress_port=1, tag=0, pad=0))
    assert CODE[backup.next_of("error").error.canonical_code] == \
        grpc.StatusCode.PERMISSION_DENIED
    backup.close()
    assert running.ports[1].frames.empty()


def wait_for(condition, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def test_digests_of_a_program_loaded_without_p4runtime_are_dropped_and_counted():
    running = RunningSwitch()  # as `lgkit switch PROGRAM` driven only by Thrift: no client
    running.switch.set_pipeline(load_program(str(PKTIO)))
    sent = MAX_HELD_DIGESTS + 500
    try:
        for _ in range(sent):
            running.inject(1, frame(MAC_A, MAC_B, 0x88B5))
        def taken() -> bool:
            with running.switch.lock:
                return (running.switch.stats(1).rx_packets == sent
                        and not running.switch.pipeline.digests)
        wait_for(taken, timeout=60)
        assert running.switch.pipeline.digests.dropped == sent
        assert running.switch.counters()["drops"]["digest_dropped"] == sent
    finally:
        running.stop()


def test_digest_lists_for_configured_digests(rig, names):
    running, client = rig
    digest_id = names["learn_t"]
    running.inject(1, frame(MAC_A, MAC_B, 0x88B5))  # not configured yet: dropped
    def drained() -> bool:
        with running.switch.lock:  # the frame's ingress pass ran and the server took its digest
            return running.switch.stats(1).rx_packets == 1 and not running.switch.pipeline.digests
    wait_for(drained)
    client.write(update(INSERT, digest_entry=p4r.DigestEntry(
        digest_id=digest_id, config=p4r.DigestEntry.Config(max_list_size=1))))
    [configured] = client.read(p4r.Entity(digest_entry=p4r.DigestEntry()))
    assert configured.digest_entry.digest_id == digest_id
    running.inject(2, frame(MAC_A, MAC_B, 0x88B5))
    digest = client.next_of("digest").digest
    assert digest.digest_id == digest_id and len(digest.data) == 1
    members = [m.bitstring for m in digest.data[0].struct.members]
    assert members == [b"\xbb", b"\x02"]
    client.send(p4r.StreamMessageRequest(digest_ack=p4r.DigestListAck(
        digest_id=digest_id, list_id=digest.list_id)))
    assert write_error(client, update(INSERT, digest_entry=p4r.DigestEntry(
        digest_id=digest_id))) == [grpc.StatusCode.ALREADY_EXISTS]
    assert write_error(client, update(INSERT, digest_entry=p4r.DigestEntry(
        digest_id=0x17000001))) == [grpc.StatusCode.NOT_FOUND]


def test_set_config_actions(rig, config, names):
    _, client = rig
    client.write(update(INSERT, table_entry=dmac(names, MAC_A)))
    set_pipeline(client, config, Cfg.VERIFY)
    set_pipeline(client, config, Cfg.RECONCILE_AND_COMMIT)
    assert len(read_tables(client, names["PktIngress.dmac"])) == 1
    set_pipeline(client, config, Cfg.VERIFY_AND_SAVE)
    assert len(read_tables(client, names["PktIngress.dmac"])) == 1
    set_pipeline(client, p4r.ForwardingPipelineConfig(), Cfg.COMMIT)
    assert read_tables(client, names["PktIngress.dmac"]) == []
    client.write(update(INSERT, table_entry=dmac(names, MAC_A)))
    set_pipeline(client, config, Cfg.VERIFY_AND_COMMIT)
    assert read_tables(client, names["PktIngress.dmac"]) == []


def test_p4info_that_does_not_match_the_program_is_rejected(rig, config):
    _, client = rig
    wrong = p4r.ForwardingPipelineConfig()
    wrong.CopyFrom(config)
    wrong.p4info.tables[0].preamble.name = "PktIngress.nonexistent"
    with pytest.raises(grpc.RpcError) as info:
        set_pipeline(client, wrong)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    broken = p4r.ForwardingPipelineConfig()
    broken.CopyFrom(config)
    broken.p4_device_config = broken.p4_device_config.replace(b"apply", b"aply", 1)
    with pytest.raises(grpc.RpcError) as info:
        set_pipeline(client, broken)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "does not compile" in info.value.details() and "error" in info.value.details()
    assert read_tables(client, 0) is not None


def test_action_scopes_are_permission_denied(rig, names):
    _, client = rig
    table_only_default = entry(names, "PktIngress.acl", "PktIngress.set_port", [(1, b"\x01")],
                               default=True)
    assert write_error(client, update(MODIFY, table_entry=table_only_default)) == \
        [grpc.StatusCode.PERMISSION_DENIED]
    default_only_entry = dmac(names, MAC_A, action="NoAction")
    assert write_error(client, update(INSERT, table_entry=default_only_entry)) == \
        [grpc.StatusCode.PERMISSION_DENIED]


def test_keyless_table_takes_only_its_default_entry(rig, names):
    _, client = rig
    keyless = entry(names, "PktIngress.keyless", "PktIngress.set_tag", [(1, b"\x04")])
    assert write_error(client, update(INSERT, table_entry=keyless)) == \
        [grpc.StatusCode.INVALID_ARGUMENT]
    keyless.is_default_action = True
    client.write(update(MODIFY, table_entry=keyless))
    [got] = read_tables(client, names["PktIngress.keyless"], is_default_action=True)
    assert got.action.action.params[0].value == b"\x04"


def test_direct_meter_config_drops_red_packets(rig, names):
    running, client = rig
    client.write(update(INSERT, table_entry=dmac(names, MAC_A, b"\x02")))
    match = [exact(names, "PktIngress.policer", "hdr.ethernet.srcAddr", MAC_B)]
    policed = entry(names, "PktIngress.policer", "PktIngress.police", match=match)
    one_per_second = p4r.MeterConfig(cir=1, cburst=1, pir=1, pburst=1)
    policed.meter_config.CopyFrom(one_per_second)
    client.write(update(INSERT, table_entry=policed))
    [meter] = client.read(p4r.Entity(direct_meter_entry=p4r.DirectMeterEntry(
        table_entry=p4r.TableEntry(table_id=names["PktIngress.policer"]))))
    assert meter.direct_meter_entry.config == one_per_second
    [with_config] = read_tables(client, names["PktIngress.policer"],
                                meter_config=p4r.MeterConfig())
    assert with_config.meter_config == one_per_second
    for _ in range(3):
        running.inject(1, frame(MAC_A, MAC_B, 0x0800))
    running.inject(1, frame(MAC_A, MAC_A, 0x0800))  # unpoliced: a marker behind them
    running.ports[2].frames.get(timeout=5)
    # the 2nd and 3rd packets were red: the next frame out is the marker
    assert running.ports[2].frames.get(timeout=5)[6:12] == MAC_A
    unconfigured = p4r.DirectMeterEntry(table_entry=p4r.TableEntry(
        table_id=names["PktIngress.policer"], match=match))
    client.write(update(MODIFY, direct_meter_entry=unconfigured))
    [meter] = client.read(p4r.Entity(direct_meter_entry=p4r.DirectMeterEntry(
        table_entry=p4r.TableEntry(table_id=names["PktIngress.policer"]))))
    assert not meter.direct_meter_entry.HasField("config")
    running.inject(1, frame(MAC_A, MAC_B, 0x0800))
    running.inject(1, frame(MAC_A, MAC_B, 0x0800))
    assert len([running.ports[2].frames.get(timeout=5) for _ in range(2)]) == 2
