"""Fuzzing the P4Runtime server with requests drawn by hypothesis, against a real server and a
real gRPC client: Write batches of every entity kind with ids right or wrong and byte strings of
any length, Reads, SetForwardingPipelineConfig with damaged configs, GetForwardingPipelineConfig,
stream messages (arbitration, packet-outs, digest acks), and Write requests whose bytes were
mutated. Every answer is a status the P4Runtime spec allows for that RPC (never INTERNAL, never
a timeout), a failed batch carries one p4.v1.Error per update, and the server answers
Capabilities after every request."""

from __future__ import annotations

import grpc
import pytest
from finsy.proto import U128, p4r, rpc_status
from fuzz_inputs import EXAMPLES, FUZZ_SETTINGS
from hypothesis import event, given, settings
from hypothesis import strategies as st
from test_p4rt_support import RunningSwitch, StreamClient, set_pipeline

S = grpc.StatusCode
RPC_CODES = {
    "Write": {S.OK, S.UNKNOWN, S.INVALID_ARGUMENT, S.NOT_FOUND, S.PERMISSION_DENIED,
              S.FAILED_PRECONDITION, S.UNIMPLEMENTED, S.RESOURCE_EXHAUSTED, S.OUT_OF_RANGE},
    "Read": {S.OK, S.INVALID_ARGUMENT, S.NOT_FOUND, S.FAILED_PRECONDITION, S.UNIMPLEMENTED,
             S.OUT_OF_RANGE},
    "SetForwardingPipelineConfig": {S.OK, S.INVALID_ARGUMENT, S.NOT_FOUND, S.PERMISSION_DENIED,
                                    S.FAILED_PRECONDITION, S.UNIMPLEMENTED},
    "GetForwardingPipelineConfig": {S.OK, S.NOT_FOUND, S.INVALID_ARGUMENT},
}
UPDATE_CODES = {code.value[0] for code in (
    S.OK, S.INVALID_ARGUMENT, S.NOT_FOUND, S.ALREADY_EXISTS, S.OUT_OF_RANGE,
    S.RESOURCE_EXHAUSTED, S.UNIMPLEMENTED, S.PERMISSION_DENIED, S.FAILED_PRECONDITION)}
STREAM_CODES = {S.OK, S.CANCELLED, S.FAILED_PRECONDITION, S.INVALID_ARGUMENT, S.NOT_FOUND,
                S.UNIMPLEMENTED, S.PERMISSION_DENIED, S.ALREADY_EXISTS, S.RESOURCE_EXHAUSTED}
P4RT_SETTINGS = settings(FUZZ_SETTINGS, max_examples=max(20, EXAMPLES))
ELECTION = 2**128 - 1
"The harness's primary holds the highest election id, so no fuzzed stream can take over."


@pytest.fixture(scope="module")
def rig(config):
    running = RunningSwitch()
    primary = StreamClient(running.port)
    primary.become_primary(ELECTION)
    set_pipeline(primary, config)
    yield running, primary, config
    primary.close()
    running.stop()


u32 = st.integers(0, 2**32 - 1)
u64 = st.integers(0, 2**63 - 1)
small = st.integers(-3, 600)
raw = st.binary(max_size=10)


def ids(real: list[int]) -> st.SearchStrategy[int]:
    """Mostly ids of the program, sometimes any id."""
    return st.one_of(st.sampled_from(real), u32) if real else u32


@st.composite
def table_entries(draw: st.DrawFn, info) -> p4r.TableEntry:
    tables = list(info.tables)
    table = draw(st.sampled_from(tables))
    entry = p4r.TableEntry(table_id=draw(ids([t.preamble.id for t in tables])),
                           priority=draw(st.integers(-1, 2**31 - 1)),
                           is_default_action=draw(st.booleans()))
    for _ in range(draw(st.integers(0, 3))):
        fid = draw(ids([f.id for f in table.match_fields]))
        kind = draw(st.sampled_from(["exact", "lpm", "ternary", "range", "optional"]))
        match = entry.match.add(field_id=fid)
        if kind == "exact":
            match.exact.value = draw(raw)
        elif kind == "lpm":
            match.lpm.value, match.lpm.prefix_len = draw(raw), draw(small)
        elif kind == "ternary":
            match.ternary.value, match.ternary.mask = draw(raw), draw(raw)
        elif kind == "range":
            match.range.low, match.range.high = draw(raw), draw(raw)
        else:
            match.optional.value = draw(raw)
    if draw(st.booleans()):
        action = entry.action.action
        action.action_id = draw(ids([a.id for a in table.action_refs]))
        for _ in range(draw(st.integers(0, 2))):
            action.params.add(param_id=draw(st.integers(0, 3)), value=draw(raw))
    if draw(st.booleans()):
        entry.counter_data.packet_count = draw(u64)
    if draw(st.booleans()):
        entry.meter_config.cir, entry.meter_config.pir = draw(u64), draw(u64)
    return entry


@st.composite
def entities(draw: st.DrawFn, info) -> p4r.Entity:
    kind = draw(st.sampled_from(["table", "counter", "register", "meter", "direct_counter",
                                 "direct_meter", "mcast", "clone", "digest", "value_set",
                                 "empty"]))
    event(f"entity {kind}")
    index = p4r.Index(index=draw(st.integers(-5, 2**40)))
    if kind == "table":
        return p4r.Entity(table_entry=draw(table_entries(info)))
    if kind == "counter":
        entry = p4r.CounterEntry(counter_id=draw(ids([c.preamble.id for c in info.counters])))
        if draw(st.booleans()):
            entry.index.CopyFrom(index)
        return p4r.Entity(counter_entry=entry)
    if kind == "register":
        entry = p4r.RegisterEntry(register_id=draw(ids([r.preamble.id for r in
                                                        info.registers])))
        if draw(st.booleans()):
            entry.index.CopyFrom(index)
        if draw(st.booleans()):
            entry.data.bitstring = draw(raw)
        return p4r.Entity(register_entry=entry)
    if kind == "meter":
        entry = p4r.MeterEntry(meter_id=draw(ids([m.preamble.id for m in info.meters])))
        entry.index.CopyFrom(index)
        entry.config.cir, entry.config.cburst = draw(st.integers(-5, 2**40)), draw(u64)
        return p4r.Entity(meter_entry=entry)
    if kind == "direct_counter":
        return p4r.Entity(direct_counter_entry=p4r.DirectCounterEntry(
            table_entry=draw(table_entries(info))))
    if kind == "direct_meter":
        return p4r.Entity(direct_meter_entry=p4r.DirectMeterEntry(
            table_entry=draw(table_entries(info))))
    if kind in ("mcast", "clone"):
        replicas = [p4r.Replica(egress_port=draw(st.integers(0, 70000)),
                                instance=draw(st.integers(0, 70000)))
                    for _ in range(draw(st.integers(0, 3)))]
        pre = p4r.PacketReplicationEngineEntry()
        if kind == "mcast":
            pre.multicast_group_entry.multicast_group_id = draw(st.integers(0, 70000))
            pre.multicast_group_entry.replicas.extend(replicas)
        else:
            clone = pre.clone_session_entry
            clone.session_id = draw(st.integers(0, 70000))
            clone.replicas.extend(replicas)
            clone.class_of_service = draw(st.integers(0, 8))
            clone.packet_length_bytes = draw(st.integers(0, 2**31 - 1))
        return p4r.Entity(packet_replication_engine_entry=pre)
    if kind == "digest":
        entry = p4r.DigestEntry(digest_id=draw(ids([d.preamble.id for d in info.digests])))
        entry.config.max_list_size = draw(st.integers(-5, 2**31 - 1))
        entry.config.max_timeout_ns = draw(st.integers(-5, 2**62))
        return p4r.Entity(digest_entry=entry)
    if kind == "value_set":
        return p4r.Entity(value_set_entry=p4r.ValueSetEntry(value_set_id=draw(u32)))
    return p4r.Entity()


def device_ids() -> st.SearchStrategy[int]:
    return st.one_of(st.just(1), st.just(1), st.integers(0, 2**64 - 1))


@st.composite
def requests(draw: st.DrawFn, config) -> tuple[str, object]:
    info = config.p4info
    rpc = draw(st.sampled_from(["Write", "Write", "Read", "SetForwardingPipelineConfig",
                                "GetForwardingPipelineConfig", "WriteBytes", "Stream"]))
    event(rpc)
    election = draw(st.one_of(st.just(ELECTION), st.integers(0, ELECTION - 1)))
    if rpc == "Write":
        updates = [p4r.Update(type=draw(st.integers(0, 4)), entity=draw(entities(info)))
                   for _ in range(draw(st.integers(0, 6)))]
        return rpc, p4r.WriteRequest(device_id=draw(device_ids()), updates=updates,
                                     election_id=U128.encode(election),
                                     atomicity=draw(st.integers(0, 3)))
    if rpc == "WriteBytes":
        good = p4r.WriteRequest(device_id=1, election_id=U128.encode(ELECTION), updates=[
            p4r.Update(type=p4r.Update.INSERT, entity=draw(entities(info)))]).SerializeToString()
        data = bytearray(good)
        for _ in range(draw(st.integers(1, 4))):
            at = draw(st.integers(0, max(0, len(data) - 1)))
            data[at:at + 1] = draw(st.binary(max_size=3))
        try:
            return "Write", p4r.WriteRequest.FromString(bytes(data))
        except Exception:  # noqa: BLE001 (not a message: gRPC would not deliver it either)
            return "Write", p4r.WriteRequest.FromString(good)
    if rpc == "Read":
        return rpc, p4r.ReadRequest(device_id=draw(device_ids()),
                                    entities=[draw(entities(info))
                                              for _ in range(draw(st.integers(0, 3)))])
    if rpc == "GetForwardingPipelineConfig":
        return rpc, p4r.GetForwardingPipelineConfigRequest(
            device_id=draw(device_ids()), response_type=draw(st.integers(0, 5)))
    if rpc == "SetForwardingPipelineConfig":
        cfg = p4r.ForwardingPipelineConfig()
        cfg.CopyFrom(config)
        blob = draw(st.sampled_from(["good", "cut", "junk", "none"]))
        if blob == "cut":
            cfg.p4_device_config = config.p4_device_config[:draw(st.integers(0, 200))]
        elif blob == "junk":
            cfg.p4_device_config = draw(st.binary(max_size=50))
        elif blob == "none":
            cfg.ClearField("p4info")
        return rpc, p4r.SetForwardingPipelineConfigRequest(
            device_id=draw(device_ids()), election_id=U128.encode(election), config=cfg,
            action=draw(st.integers(0, 6)))
    messages = []
    for _ in range(draw(st.integers(1, 4))):
        which = draw(st.sampled_from(["arbitration", "packet", "digest_ack", "empty"]))
        if which == "arbitration":
            update = p4r.MasterArbitrationUpdate(device_id=draw(device_ids()),
                                                 election_id=U128.encode(draw(
                                                     st.integers(0, ELECTION - 1))))
            if draw(st.booleans()):
                update.role.name = draw(st.text(max_size=5))
            messages.append(p4r.StreamMessageRequest(arbitration=update))
        elif which == "packet":
            packet = p4r.PacketOut(payload=draw(st.binary(max_size=100)))
            for _ in range(draw(st.integers(0, 3))):
                packet.metadata.add(metadata_id=draw(st.integers(0, 4)), value=draw(raw))
            messages.append(p4r.StreamMessageRequest(packet=packet))
        elif which == "digest_ack":
            messages.append(p4r.StreamMessageRequest(digest_ack=p4r.DigestListAck(
                digest_id=draw(u32), list_id=draw(u64))))
        else:
            messages.append(p4r.StreamMessageRequest())
    return "Stream", messages


def _check_stream(port: int, messages: list[p4r.StreamMessageRequest]) -> None:
    client = StreamClient(port)
    try:
        for message in messages:
            client.send(message)
        while True:  # read what comes back until the server goes quiet or ends the stream
            try:
                reply = client.next(timeout=0.3)
            except Exception:  # noqa: BLE001 (queue.Empty: quiet)
                return
            if isinstance(reply, grpc.RpcError):
                assert reply.code() in STREAM_CODES, reply
                return
            if reply.WhichOneof("update") == "error":
                assert reply.error.canonical_code in UPDATE_CODES, reply
    finally:
        client.close()


@pytest.mark.slow
@pytest.mark.timeout(900)
@P4RT_SETTINGS
@given(case=st.data())
def test_fuzzed_requests_get_allowed_statuses(rig, case) -> None:
    running, primary, config = rig
    rpc, request = case.draw(requests(config))
    if rpc == "Stream":
        _check_stream(running.port, request)
    else:
        call = getattr(primary.stub, rpc)
        try:
            reply = call(request, timeout=10)
            if rpc == "Read":
                list(reply)
            event(f"{rpc}: OK")
        except grpc.RpcError as err:
            event(f"{rpc}: {err.code().name}")
            assert err.code() in RPC_CODES[rpc], (rpc, err)
            if err.code() == S.UNKNOWN:
                _check_batch_details(err, request)
    primary.stub.Capabilities(p4r.CapabilitiesRequest(), timeout=5)  # still serving
    if rpc == "SetForwardingPipelineConfig":
        set_pipeline(primary, config)  # back to the program for the next request


def _check_batch_details(err: grpc.RpcError, request: p4r.WriteRequest) -> None:
    details = dict(err.trailing_metadata() or ())["grpc-status-details-bin"]
    status = rpc_status.Status.FromString(details)
    assert len(status.details) == len(request.updates)
    for packed in status.details:
        error = p4r.Error()
        assert packed.Unpack(error)
        assert error.canonical_code in UPDATE_CODES, error
