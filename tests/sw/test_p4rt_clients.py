"""Two real P4Runtime clients against the built-in switch: p4runtime-shell and finsy."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import finsy as fy
import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from test_p4rt_support import CPU_PORT, RunningSwitch, compile_program
from testpaths import TESTS

ROOT = TESTS.parent
PKTIO = TESTS / "p4" / "p4rt" / "pktio.p4"
BASIC = ROOT / "p4" / "basic.p4"
SHELL_PYTHON = ROOT / ".venv-p4rt" / "bin" / "python"
SHELL_SESSION = TESTS / "p4" / "p4rt" / "shell_session.py"
SHELL_BATCH = TESTS / "p4" / "p4rt" / "shell_batch.py"
PAYLOAD = bytes.fromhex("0000000000aa" "0000000000bb" "0800") + bytes(50)
ALREADY_EXISTS = 6
IPV4_PACKET = bytes(Ether(dst="00:00:00:00:01:01", src="00:00:00:00:00:01")
                    / IP(src="10.0.1.1", dst="10.0.2.5", ttl=64) / UDP(dport=9) / (b"x" * 20))


@pytest.fixture(scope="module")
def pktio(tmp_path_factory):
    return compile_program(PKTIO, tmp_path_factory.mktemp("pktio"))


@pytest.fixture(scope="module")
def basic(tmp_path_factory):
    return compile_program(BASIC, tmp_path_factory.mktemp("basic"))


@pytest.fixture
def running():
    rig = RunningSwitch()
    yield rig
    rig.stop()


def shell_venv() -> Path:
    """The p4runtime-shell interpreter; made by scripts/p4rt-venv.sh if missing."""
    if not SHELL_PYTHON.exists():
        made = subprocess.run(["bash", str(ROOT / "scripts" / "p4rt-venv.sh")],
                              capture_output=True, text=True, timeout=300)
        if made.returncode != 0:
            pytest.skip(f"cannot create .venv-p4rt: {made.stderr.strip()[-300:]}")
    return SHELL_PYTHON


@pytest.mark.slow
def test_p4runtime_shell_session(running, pktio):
    python = shell_venv()
    p4info, device_config = pktio
    done = subprocess.run(
        [str(python), str(SHELL_SESSION), f"127.0.0.1:{running.port}", str(p4info),
         str(device_config), str(CPU_PORT)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    assert results["dmac"] == [{"dst": "aa", "port": "02"}]
    assert results["acl_priorities"] == [7]
    [packet_in] = results["packet_in"]
    assert bytes.fromhex(packet_in["payload"]) == PAYLOAD
    assert sorted(packet_in["metadata"].values()) == sorted(["ff", "2a", "00"])
    assert results["counter"] == [{"packets": 1, "bytes": len(PAYLOAD) + 3}]
    assert results["duplicate_insert"] == [ALREADY_EXISTS]
    table = running.switch.pipeline.tables["PktIngress.dmac"]
    assert [e.params for e in table.entries()] == [[2]]


def test_p4runtime_shell_reads_a_failed_batch_of_1000(running, basic):
    """1000 updates in one Write; the same again fails whole, and the shell still gets the
    per-update codes of the prefix the status carries (gRPC's 8 KiB metadata limit)."""
    python = shell_venv()
    done = subprocess.run([str(python), str(SHELL_BATCH), f"127.0.0.1:{running.port}",
                           *map(str, basic)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    assert results["first"] == "OK"
    covered = len(results["second"])
    assert 100 < covered < 1000
    assert results["second"] == [[i, ALREADY_EXISTS] for i in range(covered)]
    assert "At index 0: ALREADY_EXISTS" in results["text"]
    assert len(running.switch.pipeline.tables["MyIngress.dmac"].entries()) == 1000


async def finsy_pktio_session(port: int, p4info: Path, device_config: Path) -> dict:
    options = fy.SwitchOptions(p4info=p4info, p4blob=device_config, device_id=1)
    results: dict = {}
    async with fy.Switch("sw1", f"127.0.0.1:{port}", options) as sw:
        await sw.insert([fy.P4TableEntry(
            "PktIngress.dmac", match=fy.P4TableMatch({"hdr.ethernet.dstAddr": 0xAA}),
            action=fy.P4TableAction("PktIngress.set_port", port=2))])
        results["dmac"] = [(e.match_dict(sw.p4info), e.action.args)
                           async for e in sw.read(fy.P4TableEntry("PktIngress.dmac"))]
        packets = sw.read_packets()
        first = asyncio.ensure_future(anext(packets))
        await asyncio.sleep(0)  # the packet queue is registered when the iterator starts
        await sw.write([fy.P4PacketOut(PAYLOAD, egress_port=CPU_PORT, tag=9, pad=0)])
        packet = await asyncio.wait_for(first, timeout=5)
        results["packet_in"] = (packet.payload, dict(packet.metadata))
        await packets.aclose()
        results["counter"] = [(c.data.packet_count, c.data.byte_count) async for c in sw.read(
            fy.P4CounterEntry("PktIngress.port_counter", index=CPU_PORT))]
    return results


def test_finsy_session_on_the_packet_io_program(running, pktio):
    results = asyncio.run(finsy_pktio_session(running.port, *pktio))
    [(match, args)] = results["dmac"]
    assert match == {"dstAddr": "0xaa"} and args == {"port": 2}
    payload, metadata = results["packet_in"]
    assert payload == PAYLOAD
    assert metadata == {"ingress_port": CPU_PORT, "tag": 10, "pad": 0}
    assert results["counter"] == [(1, len(PAYLOAD) + 3)]


async def finsy_failed_batch(port: int, p4info: Path, device_config: Path) -> fy.P4ClientError:
    options = fy.SwitchOptions(p4info=p4info, p4blob=device_config, device_id=1)
    entries = [fy.P4TableEntry("MyIngress.dmac",
                               match=fy.P4TableMatch({"hdr.ethernet.dstAddr": i + 1}),
                               action=fy.P4TableAction("MyIngress.set_port", port=2))
               for i in range(1000)]
    async with fy.Switch("sw1", f"127.0.0.1:{port}", options) as sw:
        await sw.insert(entries)
        try:
            await sw.insert(entries)
        except fy.P4ClientError as err:
            return err
    raise AssertionError("the second batch of 1000 inserts did not fail")


def test_finsy_reads_a_failed_batch_of_1000(running, basic):
    err = asyncio.run(finsy_failed_batch(running.port, *basic))
    covered = len(err.details)
    assert 100 < covered < 1000
    assert sorted(err.details) == list(range(covered))
    assert {e.canonical_code.name for e in err.details.values()} == {"ALREADY_EXISTS"}
    assert err.code.name == "UNKNOWN"
    assert err.message.startswith(
        f"1000 of 1000 updates failed; details cover updates 0..{covered - 1} only")
    assert len(running.switch.pipeline.tables["MyIngress.dmac"].entries()) == 1000


async def finsy_basic_session(running: RunningSwitch, p4info: Path, device_config: Path) -> dict:
    options = fy.SwitchOptions(p4info=p4info, p4blob=device_config, device_id=1)
    async with fy.Switch("sw1", f"127.0.0.1:{running.port}", options) as sw:
        await sw.insert([fy.P4TableEntry(
            "MyIngress.ipv4_lpm", match=fy.P4TableMatch({"hdr.ipv4.dstAddr": "10.0.2.0/24"}),
            action=fy.P4TableAction("MyIngress.ipv4_forward", dstAddr=0x0A, port=2))])
        entries = [e async for e in sw.read(fy.P4TableEntry("MyIngress.ipv4_lpm"))]
        running.inject(1, IPV4_PACKET)
        forwarded = await asyncio.to_thread(running.ports[2].frames.get, timeout=5)
        counters = [(c.index, c.data.packet_count) async for c in sw.read(
            fy.P4CounterEntry("MyIngress.ingress_packets"))]
        return {"entries": [(e.match_dict(sw.p4info), e.action.args) for e in entries],
                "forwarded": forwarded, "counters": counters}


def test_finsy_session_on_basic_p4(running, basic):
    results = asyncio.run(finsy_basic_session(running, *basic))
    assert results["entries"] == [({"dstAddr": "0xa000200/24"}, {"dstAddr": 0x0A, "port": 2})]
    forwarded = Ether(results["forwarded"])
    assert forwarded.dst == "00:00:00:00:00:0a" and forwarded[IP].ttl == 63
    assert len(results["counters"]) == 512
    assert [(index, n) for index, n in results["counters"] if n] == [(1, 1)]
