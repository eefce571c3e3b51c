"""TNA P4Info as bf-p4c writes it (pipe. names, barefoot extern entries), and a real gRPC
P4Runtime client of the switch reaching a TNA program's table and register through it."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import grpc
import pytest
from finsy.proto import p4i, p4r
from test_p4rt_support import (
    RunningSwitch,
    StreamClient,
    batch_errors,
    compile_program,
    forwarding_config,
    set_pipeline,
)
from testpaths import TESTS

from lgkit.sw.exec.arch.tna.passes import _mirrors
from lgkit.sw.exec.interp.tables import Exact, TableEntry
from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.frontend.compiler import compile_file, compile_source
from lgkit.sw.lang.p4info import build_p4info, p4info_text
from lgkit.sw.lang.tna_p4info import MESSAGES, TNA_REGISTER, standard_view
from lgkit.sw.p4runtime.errors import P4RTError
from lgkit.sw.p4runtime.schema import P4InfoIndex

PROGRAM = TESTS / "p4" / "tna" / "features.p4"
PACKET = bytes.fromhex("000000000002 000000000001 0800 DEADBEEF".replace(" ", ""))
BF_P4C_ONLY = {143, 145}  # DynHash, Snapshot: extern entries we do not write

COUNTERS = """#include <tna.p4>
header eth_h { bit<48> dst; bit<48> src; bit<16> etype; }
struct h_t { eth_h eth; }
struct m_t { }
struct pair_t { bit<16> lo; bit<16> hi; }
parser IP(packet_in pkt, out h_t hdr, out m_t md, out ingress_intrinsic_metadata_t ig_intr_md) {
    value_set<bit<16>>(4) types;
    state start {
        pkt.extract(ig_intr_md); pkt.advance(PORT_METADATA_SIZE); pkt.extract(hdr.eth);
        transition select(hdr.eth.etype) { types: reject; default: accept; }
    }
}
control Sub(inout h_t hdr) {
    action inner() { hdr.eth.dst[39:32] = 2; }
    action mark() { inner(); hdr.eth.dst[47:40] = 1; }
    table st { actions = { mark; } }
    apply { st.apply(); }
}
control I(inout h_t hdr, inout m_t md, in ingress_intrinsic_metadata_t ig_intr_md,
          in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
          inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
          inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Counter<bit<32>, PortId_t>(512, CounterType_t.PACKETS_AND_BYTES) c;
    DirectCounter<bit<32>>(CounterType_t.PACKETS) dc;
    Meter<PortId_t>(512, MeterType_t.BYTES) mt;
    Register<pair_t, bit<8>>(256) pr;
    RegisterAction<pair_t, bit<8>, bit<16>>(pr) pa = {
        void apply(inout pair_t v, out bit<16> rv) { v.lo = v.lo + 1; rv = v.hi; }
    };
    action fwd(PortId_t port) {
        ig_tm_md.ucast_egress_port = port; dc.count(); c.count(port);
        hdr.eth.etype = pa.execute(0);
        hdr.eth.src[7:0] = mt.execute(port);
    }
    table t { key = { hdr.eth.dst : exact; } actions = { fwd; } counters = dc; size = 64; }
    Sub() sub;
    apply { t.apply(); sub.apply(hdr); }
}
control ID(packet_out pkt, inout h_t hdr, in m_t md,
           in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) { apply { pkt.emit(hdr); } }
parser EP(packet_in pkt, out h_t hdr, out m_t md, out egress_intrinsic_metadata_t eg_intr_md) {
    state start { pkt.extract(eg_intr_md); transition accept; }
}
control E(inout h_t hdr, inout m_t md, in egress_intrinsic_metadata_t eg_intr_md,
          in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
          inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
          inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) { apply { } }
control ED(packet_out pkt, inout h_t hdr, in m_t md,
           in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) { apply { pkt.emit(hdr); } }
Pipeline(IP(), I(), ID(), EP(), E(), ED()) pipe;
Switch(pipe) main;
"""


def extern_ids(info: p4i.P4Info) -> dict[str, tuple[int, int]]:
    return {i.preamble.name: (e.extern_type_id, i.preamble.id)
            for e in info.externs for i in e.instances}


def test_tables_and_externs_carry_the_pipeline_instance_and_bf_p4c_ids() -> None:
    info = build_p4info(compile_file(str(PROGRAM)).ir)
    assert info.pkg_info.arch == "tna"
    [table] = info.tables
    assert (table.preamble.name, table.preamble.alias, table.size) == ("pipe.Ig.t", "t", 512)
    assert table.preamble.id == 0x0275725E  # bf-p4c's id for pipe.Ig.t
    assert "Ig.fwd" in [a.preamble.name for a in info.actions]  # actions keep their names
    assert not info.registers
    assert extern_ids(info) == {"pipe.Ig.pkts": (TNA_REGISTER, 0x8B39AE0E),
                                "pipe.IgDeparser.learn": (142, 0x8EC875B6),
                                "pipe.IgParser.$PORT_METADATA": (144, 0x90D3F4F7)}
    body = MESSAGES["Register"]()
    assert info.externs[0].instances[0].info.Unpack(body)
    assert (body.size, body.data_field_name, body.type_spec.bitstring.bit.bitwidth) == (
        512, "Ig.pkts", 32)
    assert "[type.googleapis.com/barefoot.Register]" in p4info_text(compile_file(str(PROGRAM)).ir)


def test_counters_direct_counters_and_struct_registers() -> None:
    compiled = compile_source(COUNTERS)
    info = build_p4info(compiled.ir)
    pipeline = Pipeline.load(compiled)
    P4InfoIndex.build(info).check_against(pipeline)  # names the switch finds
    assert pipeline.tables["I.t"].direct_counter is not None
    assert list(pipeline.value_sets) == ["IP.types"]
    assert [(e.extern_type_id, e.extern_type_name) for e in info.externs] == [
        (131, "Counter"), (133, "Meter"), (139, "Register"), (132, "DirectCounter"),
        (254, "ValueSet"), (144, "PortMetadata")]
    # bf-p4c: actions in declaration order, a nested control's where it is instantiated, not
    # those only other actions call (inner); value sets as externs
    assert [a.preamble.name for a in info.actions] == ["NoAction", "I.fwd", "I.sub.mark"]
    assert [t.preamble.name for t in info.tables] == ["pipe.I.t", "pipe.I.sub.st"]
    value_set = info.externs[-2].instances[0].preamble
    assert (value_set.name, value_set.alias) == ("pipe.IP.types",) * 2
    ids = extern_ids(info)
    table = info.tables[0]
    assert list(table.direct_resource_ids) == [ids["pipe.I.dc"][1]]
    assert [i >> 24 for _, i in ids.values()] == [131, 133, 139, 132, 254, 144]
    view = standard_view(info)
    assert [(c.preamble.name, c.spec.unit, c.size) for c in view.counters] == [
        ("I.c", p4i.CounterSpec.BOTH, 512)]
    assert [(c.preamble.name, c.direct_table_id) for c in view.direct_counters] == [
        ("I.dc", table.preamble.id)]
    assert [(r.preamble.name, r.type_spec.struct.name, r.size) for r in view.registers] == [
        ("I.pr", "pair_t", 256)]
    assert [(m.preamble.name, m.spec.unit, m.size) for m in view.meters] == [
        ("I.mt", p4i.MeterSpec.BYTES, 512)]
    assert [t.preamble.name for t in view.tables] == ["I.t", "I.sub.st"]
    [types] = view.value_sets
    assert (types.preamble.name, [(m.id, m.bitwidth) for m in types.match], types.size) == (
        "IP.types", [(1, 16)], 4)


def bf_p4c_p4info(program: Path, out: Path) -> p4i.P4Info:
    driver = shutil.which("bf-p4c")
    if driver is None:
        pytest.skip("bf-p4c not on PATH (source /work/shared/oracle/env-tofino.sh)")
    target = out / "p4info.bin"
    proc = subprocess.run([driver, "--std", "p4-16", "--target", "tofino", "--arch", "tna",
                           "-o", str(out / "out"), "--p4runtime-files", str(target), str(program)],
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return p4i.P4Info.FromString(target.read_bytes())


def test_the_p4info_is_bf_p4cs_but_for_the_entries_we_leave_out(tmp_path: Path) -> None:
    theirs = bf_p4c_p4info(PROGRAM, tmp_path)
    compiled = compile_file(str(PROGRAM))
    P4InfoIndex.build(theirs).check_against(Pipeline.load(compiled))  # the switch takes it
    ours = build_p4info(compiled.ir)
    kept = [e for e in theirs.externs if e.extern_type_id not in BF_P4C_ONLY]
    assert len(kept) == 3 < len(theirs.externs)  # Register, Digest, PortMetadata; Snapshot
    del theirs.externs[:]
    theirs.externs.extend(kept)
    assert ours == theirs


@pytest.mark.parametrize("program", [TESTS / "p4" / "tna" / "direct" / "direct.p4",
                                     TESTS / "p4" / "tna" / "port_metadata" / "pm.p4"],
                         ids=["direct_register", "port_metadata"])
def test_direct_registers_and_port_metadata_are_bf_p4cs(program: Path, tmp_path: Path) -> None:
    theirs = bf_p4c_p4info(program, tmp_path)
    kinds = {e.extern_type_id for e in theirs.externs}
    assert kinds & {140, 144}  # DirectRegister, PortMetadata
    kept = [e for e in theirs.externs if e.extern_type_id not in BF_P4C_ONLY]
    del theirs.externs[:]
    theirs.externs.extend(kept)
    assert build_p4info(compile_file(str(program)).ir) == theirs


def find(info: p4i.P4Info, kind: str, name: str) -> int:
    return next(o.preamble.id for o in getattr(info, kind) if o.preamble.name == name)


def register_entry(register_id: int, index: int, value: int | None = None) -> p4r.Entity:
    entry = p4r.RegisterEntry(register_id=register_id, index=p4r.Index(index=index))
    if value is not None:
        entry.data.bitstring = value.to_bytes(4, "big")
    return p4r.Entity(register_entry=entry)


@pytest.fixture
def rig(tmp_path: Path):
    config = forwarding_config(*compile_program(PROGRAM, tmp_path))
    running = RunningSwitch()
    client = StreamClient(running.port)
    client.become_primary(10)
    set_pipeline(client, config)
    yield running, client, config.p4info
    client.close()
    running.stop()


def test_a_p4runtime_client_reaches_the_table_and_the_register(rig) -> None:
    running, client, info = rig
    table_id = find(info, "tables", "pipe.Ig.t")
    register_id = extern_ids(info)["pipe.Ig.pkts"][1]
    entry = p4r.TableEntry(table_id=table_id)
    entry.match.add(field_id=1).exact.value = b"\x01"
    entry.action.action.action_id = find(info, "actions", "Ig.count_fwd")
    entry.action.action.params.add(param_id=1, value=b"\x02")
    client.write(p4r.Update(type=p4r.Update.INSERT, entity=p4r.Entity(table_entry=entry)))
    sources = []
    for _ in range(2):
        running.inject(1, PACKET)
        sources.append(running.ports[2].frames.get(timeout=5)[6:12])
    assert sources == [bytes.fromhex("000000000001"), bytes.fromhex("000000000002")]
    [read] = client.read(register_entry(register_id, 1))
    assert int.from_bytes(read.register_entry.data.bitstring, "big") == 2
    client.write(p4r.Update(type=p4r.Update.MODIFY, entity=register_entry(register_id, 1, 41)))
    running.inject(1, PACKET)
    assert running.ports[2].frames.get(timeout=5)[6:12] == bytes.fromhex("00000000002A")
    assert running.switch.pipeline.registers["Ig.pkts"].read(1) == 42
    [table_read] = client.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=table_id)))
    assert table_read.table_entry.action == entry.action


@pytest.mark.parametrize(("max_len", "queue"), [(0, 0), (20, 0), (0, 2)])
def test_a_mirror_session_cuts_its_copies_to_packet_length_bytes(tmp_path: Path, max_len: int,
                                                                  queue: int) -> None:
    """CloneSessionEntry.packet_length_bytes is the session's max_pkt_len: the ingress mirror
    copy (2-byte mirror header + the original packet + 4-byte FCS) cut to 20 bytes loses the
    payload; class_of_service is the queue of the session's copies (queue 2 of a one-queue
    switch: the copy is dropped as a bad priority). Session ids run to 1023 (MirrorId_t's 10
    bits), not v1model's 511."""
    config = forwarding_config(*compile_program(PROGRAM, tmp_path))
    running = RunningSwitch(ports=(1, 2, 6))
    client = StreamClient(running.port)
    try:
        client.become_primary(10)
        set_pipeline(client, config)
        session = p4r.CloneSessionEntry(session_id=1023, packet_length_bytes=max_len,
                                        class_of_service=queue)
        session.replicas.add(port=b"\x06")
        pre = p4r.Entity(packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
            clone_session_entry=session))
        entry = p4r.TableEntry(table_id=find(config.p4info, "tables", "pipe.Ig.t"))
        entry.match.add(field_id=1).exact.value = b"\x01"
        entry.action.action.action_id = find(config.p4info, "actions", "Ig.mirror_fwd")
        entry.action.action.params.add(param_id=1, value=b"\x02")
        entry.action.action.params.add(param_id=2, value=b"\x03\xff")
        too_far = p4r.CloneSessionEntry(session_id=1024)
        with pytest.raises(grpc.RpcError) as refused:
            client.write(p4r.Update(type=p4r.Update.INSERT, entity=p4r.Entity(
                packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
                    clone_session_entry=too_far))))
        [error] = batch_errors(refused.value)
        assert "not in 1..1023" in error.message
        client.write(p4r.Update(type=p4r.Update.INSERT, entity=pre),
                     p4r.Update(type=p4r.Update.INSERT, entity=p4r.Entity(table_entry=entry)))
        running.inject(1, PACKET)
        assert running.ports[2].frames.get(timeout=5) == bytes.fromhex("000000000202") + PACKET[6:]
        copy = bytes.fromhex("000000000601") + PACKET[6:]
        if queue:
            deadline = time.monotonic() + 5
            while not running.switch.drops["bad_priority"] and time.monotonic() < deadline:
                time.sleep(0.01)
            assert running.switch.drops["bad_priority"] == 1
        else:
            assert running.ports[6].frames.get(timeout=5) == (copy[:14] if max_len else copy)
        [read] = client.read(pre)
        assert read.packet_replication_engine_entry.clone_session_entry == session
        pipeline = running.switch.pipeline
        assert pipeline is not None
        assert [job.priority for job in _mirrors(pipeline, 1023, copy)] == [queue]
    finally:
        client.close()
        running.stop()


def struct_entry(register_id: int, fields: list[int] | None = None) -> p4r.Entity:
    entry = p4r.RegisterEntry(register_id=register_id, index=p4r.Index(index=0))
    for value in fields or []:
        entry.data.struct.members.add(bitstring=value.to_bytes(2, "big"))
    return p4r.Entity(register_entry=entry)


def test_a_client_writes_and_reads_a_struct_register_and_a_counter(tmp_path: Path) -> None:
    source = tmp_path / "counters.p4"
    source.write_text(COUNTERS)
    config = forwarding_config(*compile_program(source, tmp_path))
    ids = extern_ids(config.p4info)
    running = RunningSwitch()
    client = StreamClient(running.port)
    try:
        client.become_primary(10)
        set_pipeline(client, config)
        entry = p4r.TableEntry(table_id=find(config.p4info, "tables", "pipe.I.t"))
        entry.match.add(field_id=1).exact.value = b"\x02"
        entry.action.action.action_id = find(config.p4info, "actions", "I.fwd")
        entry.action.action.params.add(param_id=1, value=b"\x02")
        register = ids["pipe.I.pr"][1]
        client.write(p4r.Update(type=p4r.Update.INSERT, entity=p4r.Entity(table_entry=entry)),
                     p4r.Update(type=p4r.Update.MODIFY, entity=struct_entry(register, [5, 7])))
        running.inject(1, PACKET)
        green = PACKET[:11] + b"\x00\x00\x07" + PACKET[14:]  # src[7:0]: the meter's colour
        assert running.ports[2].frames.get(timeout=5) == green
        [read] = client.read(struct_entry(register))
        members = read.register_entry.data.struct.members
        assert [int.from_bytes(m.bitstring, "big") for m in members] == [6, 7]
        counter = p4r.CounterEntry(counter_id=ids["pipe.I.c"][1], index=p4r.Index(index=2))
        [count] = client.read(p4r.Entity(counter_entry=counter))
        assert (count.counter_entry.data.packet_count,
                count.counter_entry.data.byte_count) == (1, len(PACKET))
        with pytest.raises(grpc.RpcError) as failed:
            client.write(p4r.Update(type=p4r.Update.MODIFY, entity=struct_entry(register, [1])))
        [error] = batch_errors(failed.value)
        assert "must be a struct of 2 bitstrings" in error.message
    finally:
        client.close()
        running.stop()


def test_a_meter_marks_green_yellow_red_with_tnas_colour_values() -> None:
    """Bursts of one and two packets' bytes at (almost) no refill: the packets of one instant
    are green, yellow, then red (3); an unconfigured cell stays green."""
    pipeline = Pipeline.load(compile_source(COUNTERS))
    pipeline.tables["I.t"].insert(TableEntry([Exact(2)], "I.fwd", [2]))
    pipeline.tables["I.t"].insert(TableEntry([Exact(3)], "I.fwd", [3]))
    pipeline.meters["I.mt"].set_rates(2, (1, len(PACKET)), (1, 2 * len(PACKET)))
    colours = [pipeline.run_untimed(1, PACKET)[0][1][11] for _ in range(3)]
    assert colours == [0, 1, 3]
    other = PACKET[:5] + b"\x03" + PACKET[6:]
    assert pipeline.run_untimed(1, other)[0][1][11] == 0


def test_a_client_receives_the_digests_of_a_tna_digest(rig) -> None:
    running, client, info = rig
    digest_id = extern_ids(info)["pipe.IgDeparser.learn"][1]
    entry = p4r.TableEntry(table_id=find(info, "tables", "pipe.Ig.t"))
    entry.match.add(field_id=1).exact.value = b"\x01"
    entry.action.action.action_id = find(info, "actions", "Ig.learn_fwd")
    entry.action.action.params.add(param_id=1, value=b"\x02")
    config = p4r.DigestEntry(digest_id=digest_id,
                             config=p4r.DigestEntry.Config(max_list_size=1))
    client.write(p4r.Update(type=p4r.Update.INSERT, entity=p4r.Entity(table_entry=entry)),
                 p4r.Update(type=p4r.Update.INSERT, entity=p4r.Entity(digest_entry=config)))
    running.inject(1, PACKET)
    digest = client.next_of("digest").digest
    assert digest.digest_id == digest_id
    assert [m.bitstring for m in digest.data[0].struct.members] == [b"\x01", b"\x01"]


def test_a_tna_extern_entry_with_the_wrong_info_is_refused() -> None:
    info = build_p4info(compile_file(str(PROGRAM)).ir)
    info.externs[0].instances[0].info.Pack(MESSAGES["Meter"](size=1))  # under Register's id
    with pytest.raises(P4RTError, match="pipe.Ig.pkts: info is not a barefoot.Register"):
        P4InfoIndex.build(info)
