"""The C host agent against the Python logic it replaces: the same packet sequences (framed and
unframed streams, pipelined messages, split length prefixes, retransmissions, sequence
wrap-around, lost framing, RST) give byte-identical marks, and the same arrivals (shuffled,
duplicated, lost, with timeouts) the same releases and counters."""

from __future__ import annotations

import json
import random
import struct
import subprocess
from collections import defaultdict
from dataclasses import asdict
from pathlib import Path

import pytest

from lgkit.core.frames import ip_bytes, ipv4_checksum
from lgkit.schemes import flowinfo, vertigo_cagent, vertigo_host
from lgkit.schemes.vertigo_host import flow_key
from lgkit.schemes.vertigo_marker import Marker, MarkerStats
from lgkit.schemes.vertigo_orderer import Orderer, OrdererStats

FRAMED = 5300
TAU_US = 5000.0


@pytest.fixture(scope="module")
def binary() -> str:
    path, why = vertigo_cagent.build()
    if path is None:
        pytest.skip(f"C agent not built: {why}")
    return str(path)


def tcp(src: str, sport: int, dport: int, seq: int, payload: bytes = b"",
        flags: int = 0x18) -> bytes:
    header = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, 0, 0x50, flags, 1000, 0,
                         0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 40 + len(payload), 1, 0, 64, 6, 0,
                     ip_bytes(src), ip_bytes("10.0.0.9"))
    return ip[:10] + struct.pack("!H", ipv4_checksum(ip)) + ip[12:] + header + payload


def stream(rng: random.Random, framed: bool) -> bytes:
    """Messages written back to back (sometimes one with a bad length: lost framing)."""
    out = b""
    for _ in range(rng.randint(1, 6)):
        size = rng.choice([rng.randint(4, 300), rng.randint(300, 9000)])
        if framed and rng.random() < 0.05:
            out += struct.pack("!I", rng.randint(0, 3))
        out += struct.pack("!I", size) + bytes(rng.getrandbits(8) for _ in range(size - 4))
    return out


def sent_packets(rng: random.Random) -> list[bytes]:
    """What hosts send, interleaved over several connections."""
    conns = []
    for index in range(rng.randint(1, 4)):
        framed = rng.random() < 0.8
        isn = rng.choice([rng.getrandbits(32), 0xFFFFFFFF - rng.randint(0, 5000)])
        src, sport = f"10.0.0.{1 + index % 2}", 40000 + index
        dport = FRAMED if framed else 80
        data = stream(rng, framed)
        cuts, at = [], 0
        while at < len(data):
            step = rng.choice([1, 2, 3, rng.randint(1, 1448), 1448])
            cuts.append((at, min(len(data), at + step)))
            at += step
        packets = [tcp(src, sport, dport, isn, flags=0x02)] if rng.random() < 0.9 else []
        for a, b in cuts:
            packets.append(tcp(src, sport, dport, isn + 1 + a, data[a:b]))
            if rng.random() < 0.1:
                packets.append(tcp(src, sport, dport, isn + 1, flags=0x10))  # pure ACK
            if rng.random() < 0.08:
                c, d = rng.choice(cuts[:cuts.index((a, b)) + 1])
                packets.append(tcp(src, sport, dport, isn + 1 + c, data[c:d]))  # again
        packets.append(tcp(src, sport, dport, isn + 1 + len(data),
                           flags=rng.choice([0x11, 0x04])))  # FIN or RST
        conns.append(packets)
    out = []
    while any(conns):
        out.append(rng.choice([c for c in conns if c]).pop(0))
    return out


class CAgent:
    """The C agent in replay mode."""

    def __init__(self, binary: str) -> None:
        self.proc = subprocess.Popen([binary, "--replay", "--framed-ports", str(FRAMED),
                                      "--tau-us", str(TAU_US)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)

    def ask(self, line: str) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return self.proc.stdout.readline().strip()

    def released(self, line: str) -> list[int]:
        return [int(h) for h in self.ask(line).split()[1:]]

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


@pytest.mark.parametrize("seed", range(12))
def test_same_marks_same_order_same_counters(binary: str, seed: int) -> None:
    marker, orderer = run_both(binary, seed)
    assert marker.marked


def test_the_sequences_exercise_every_path(binary: str) -> None:
    runs = [run_both(binary, seed) for seed in range(12)]
    marked = [sum(getattr(m, k) for m, _ in runs) for k in (
        "retransmissions", "aged", "lost_framing", "skipped", "flows")]
    ordered = [sum(getattr(o, k) for _, o in runs) for k in (
        "in_order", "early", "late", "timeouts", "released_by_timeout", "passed")]
    assert all(marked) and all(ordered), (marked, ordered)


def run_both(binary: str, seed: int) -> tuple[MarkerStats, OrdererStats]:
    """One random sequence through both; asserts they agree at every step."""
    rng = random.Random(seed)
    agent = CAgent(binary)
    try:
        marker = Marker({FRAMED})
        marked = []
        for packet in sent_packets(rng):
            mine = marker.mark(packet)
            assert agent.ask(f"M {packet.hex()}") == f"M {mine.hex()}"
            marked.append(mine)
        arrivals = [p for p in marked if rng.random() > 0.05]
        arrivals += rng.sample(marked, len(marked) // 10)  # duplicates
        rng.shuffle(arrivals)
        orderer, now, flows = Orderer(TAU_US), 0.0, {}
        for handle, packet in enumerate(arrivals):
            now += rng.choice([1.0, 50.0, 2000.0])
            info = flowinfo.read(packet)
            key, length = flow_key(packet, info) if info else (None, 0)
            flows[handle] = key
            assert agent.released(f"O {handle} {now} {packet.hex()}") == orderer.arrive(
                handle, key, info, length, now)
            if rng.random() < 0.2:
                now += rng.choice([100.0, TAU_US])
                assert by_flow(agent.released(f"E {now}"), flows) == by_flow(
                    orderer.expire(now), flows)
        assert sorted(agent.released("F")) == sorted(orderer.flush())
        stats = json.loads(agent.ask("S"))
        assert stats["marker"] == asdict(marker.stats)
        assert stats["orderer"] == asdict(orderer.stats)
    finally:
        agent.close()
    return marker.stats, orderer.stats


def by_flow(handles: list[int], flows: dict[int, object]) -> dict[object, list[int]]:
    """Released handles per flow, in order (flows time out in any order)."""
    grouped: dict[object, list[int]] = defaultdict(list)
    for handle in handles:
        grouped[flows[handle]].append(handle)
    return dict(grouped)



def test_without_a_compiler_auto_says_so_in_one_line_and_runs_python(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("LGKIT_NATIVE_CACHE", str(tmp_path))
    monkeypatch.setenv("CC", "false")
    path, why = vertigo_cagent.build()
    assert path is None and why.startswith("C compiler failure")
    assert vertigo_host.c_agent("auto") is None
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "running the Python agent" in err
    with pytest.raises(OSError, match="cannot be built"):
        vertigo_host.c_agent("c")
    assert [p.suffix for p in tmp_path.iterdir()] == [".c"]  # the source, no half a binary


def test_a_build_lands_whole_in_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          binary: str) -> None:
    assert binary  # the system can build it
    monkeypatch.setenv("LGKIT_NATIVE_CACHE", str(tmp_path))
    path, _ = vertigo_cagent.build()
    assert path is not None and path.parent == tmp_path
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [path.name, path.with_suffix(".c").name]), "a temporary was left"
    out = subprocess.run([str(path), "--replay"], input="S\n", capture_output=True, text=True,
                         check=True).stdout
    assert json.loads(out)["engine"] == "c"
