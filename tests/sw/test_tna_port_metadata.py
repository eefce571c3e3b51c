"""Port metadata on the TNA model: the control plane's per-port values
(`port_metadata PORT FIELD=VALUE...`) in STF and on a switch, what port_metadata_unpack reads,
and bad commands (tests/p4/tna/port_metadata)."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from finsy.proto import p4d, p4r
from test_p4rt_support import (
    RunningSwitch,
    StreamClient,
    batch_errors,
    compile_program,
    forwarding_config,
    set_pipeline,
)
from test_tm_queues import PROGRAM as V1_PROGRAM
from test_tna_pktgen import assert_stf_error, pfc
from testpaths import TESTS

from lgkit.cli import main
from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.frontend.compiler import compile_file
from lgkit.sw.lang.tna_p4info import TNA_PORT_METADATA
from lgkit.sw.switch.control_service import CommandError, SwitchCommands
from lgkit.sw.switch.vnet import VirtualNetwork

FOLDER = TESTS / "p4" / "tna" / "port_metadata"
PROGRAM = FOLDER / "pm.p4"
FRAME = bytes.fromhex("000000000001" "000000000000" "0800")


def test_stf(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stf", str(PROGRAM), str(FOLDER / "ports.stf")]) == 0
    assert "PASS" in capsys.readouterr().out


@pytest.mark.parametrize(("line", "message"), [
    ("port_metadata 512 a=1", "PORT must be in 0..511, got 512"),
    ("port_metadata 1 to=512", "to must be in 0..511, got 512"),
    ("port_metadata 1 c=1", "'c=1' is not FIELD=VALUE of pm_t (a, b, to, tag)"),
    ("port_metadata 1 a", "'a' is not FIELD=VALUE of pm_t"),
    ("port_metadata 1 a=x", "a must be an integer, got 'x'"),
    ("port_metadata", "port_metadata: expected PORT [FIELD=VALUE]..."),
])
def test_bad_commands_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          line: str, message: str) -> None:
    assert_stf_error(PROGRAM, line, message, tmp_path, capsys)


def test_a_program_without_port_metadata_and_v1model_refuse_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stf = tmp_path / "pm.stf"
    stf.write_text("port_metadata 1\n")
    assert main(["stf", str(TESTS / "p4" / "tna" / "pktgen" / "gen.p4"), str(stf)]) == 1
    assert "reads no port metadata (no port_metadata_unpack)" in capsys.readouterr().err
    assert main(["stf", str(V1_PROGRAM), str(stf)]) == 1
    assert "port_metadata: not a command of v1model programs" in capsys.readouterr().err


def test_a_switch_sets_port_metadata_through_its_control() -> None:
    net = VirtualNetwork(seed=1)
    s1 = net.add_switch("s1", Pipeline.load(compile_file(str(PROGRAM))))
    hosts = [net.add_host(f"h{i}") for i in range(3)]
    for port, host in enumerate(hosts, start=1):
        net.link(host, s1, port=port)
    cli = SwitchCommands(s1)
    cli.run("port_metadata 1 to=3 tag=8")  # queue 0: the only one
    hosts[0].send(FRAME)
    net.run(until_ns=1_000_000)
    assert [d for _, d in hosts[2].received] == [
        bytes.fromhex("000000000001" "000000030008" "0800")]
    with pytest.raises(CommandError, match="port_metadata: PORT must be in 0..511, got 999"):
        cli.run("port_metadata 999")


def test_qid_picks_the_queue_a_pfc_pause_names() -> None:
    """Ports 1 and 3 send to port 2 in queues 3 and 1 (their port metadata's tag); h2 pauses
    priority 3 for 2000 quanta (1.024 ms at 1 Gb/s): only port 1's frames wait, in order."""
    net = VirtualNetwork(seed=1)
    s1 = net.add_switch("s1", Pipeline.load(compile_file(str(PROGRAM))), priority_queues=4)
    hosts = [net.add_host(f"h{i}") for i in (1, 2, 3)]
    for port, host in enumerate(hosts, start=1):
        net.link(host, s1, port=port, rate_bps=1e9)
    cli = SwitchCommands(s1)
    cli.run("port_metadata 1 to=2 tag=3")
    cli.run("port_metadata 3 to=2 tag=1")
    hosts[1].send(pfc(0b1000, [0, 0, 0, 2000]), at_ns=0)
    for seq in range(3):
        hosts[0].send(FRAME[:5] + bytes([seq]) + FRAME[6:], at_ns=10_000)
    hosts[2].send(FRAME[:5] + b"\x09" + FRAME[6:], at_ns=20_000)
    net.run(until_ns=5_000_000)
    got = [(t, d[5], d[11]) for t, d in hosts[1].received]  # dst[5]; src[7:0]: the tag
    assert [(seq, tag) for _, seq, tag in got] == [(9, 1), (0, 3), (1, 3), (2, 3)]
    assert got[0][0] < 100_000 and 1_024_000 < got[1][0] < 1_100_000


def extern_entry(extern_id: int, values: list[int] | None) -> p4r.Entity:
    """The port metadata ExternEntry: the port, then the fields (None: no entry, a wildcard)."""
    entry = p4r.ExternEntry(extern_type_id=TNA_PORT_METADATA, extern_id=extern_id)
    if values is not None:
        data = p4d.P4Data()
        data.struct.members.extend(p4d.P4Data(bitstring=bytes([v >> 8, v & 255]))
                                   for v in values)
        entry.entry.Pack(data)
    return p4r.Entity(extern_entry=entry)


def test_a_p4runtime_client_writes_and_reads_port_metadata(tmp_path: Path) -> None:
    config = forwarding_config(*compile_program(PROGRAM, tmp_path))
    [group] = [e for e in config.p4info.externs if e.extern_type_id == TNA_PORT_METADATA]
    ident = group.instances[0].preamble.id
    running = RunningSwitch()
    client = StreamClient(running.port)
    try:
        client.become_primary(10)
        set_pipeline(client, config)
        client.write(p4r.Update(type=p4r.Update.INSERT,
                                entity=extern_entry(ident, [1, 1, 0, 2, 8])))
        running.inject(1, FRAME)
        assert running.ports[2].frames.get(timeout=5) == bytes.fromhex(
            "000000000001" "010000020008" "0800")  # tag 8: queue 0
        [read] = client.read(extern_entry(ident, None))
        data = p4d.P4Data()
        assert read.extern_entry.entry.Unpack(data)
        assert [int.from_bytes(m.bitstring, "big") for m in data.struct.members] == [
            1, 1, 0, 2, 8]
        with pytest.raises(grpc.RpcError) as failed:
            client.write(p4r.Update(type=p4r.Update.INSERT,
                                    entity=extern_entry(ident, [1, 1])))
        [error] = batch_errors(failed.value)
        assert "a P4Data struct of the port and 4 field bitstrings" in error.message
        client.write(p4r.Update(type=p4r.Update.DELETE, entity=extern_entry(ident, [1])))
        assert client.read(extern_entry(ident, None)) == []
    finally:
        client.close()
        running.stop()
