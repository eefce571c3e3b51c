"""Vertigo's host agent in the kernel (root): two network namespaces on a veth pair, the
agent marking in one and ordering in the other; the option is on the wire with the right
remaining sizes, TCP's data arrives whole, the rules go away with the agent."""

from __future__ import annotations

import bisect
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from testpaths import REPO

from lgkit.schemes import flowinfo
from lgkit.schemes.vertigo_testbed import ADVMSS, reserve_option_room
from lgkit.workloads import hostconfig
from lgkit.workloads.hostconfig import HostSettings

NS_A, NS_B = f"lgvta{os.getpid()}", f"lgvtb{os.getpid()}"
DEV_A, DEV_B = f"vta{os.getpid() % 10000}", f"vtb{os.getpid() % 10000}"
PORT = 5300
SIZES = (3000, 45_000, 700, 5000)
"Written back to back: messages share segments (the 700 B one may have none of its own)."

pytestmark = [pytest.mark.root, pytest.mark.skipif(shutil.which("iptables") is None,
                                             reason="iptables missing (make setup)")]


def ns(name: str, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", "netns", "exec", name, *argv], capture_output=True, text=True,
                          check=True, timeout=30)


class Namespace:
    """A network namespace as a Mininet host (`cmd` runs a shell command in it)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def cmd(self, *args: str) -> str:
        return ns(self.name, "sh", "-c", " ".join(args)).stdout


@pytest.fixture
def pair() -> Iterator[None]:
    for name in (NS_A, NS_B):
        subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        subprocess.run(["ip", "link", "add", DEV_A, "netns", NS_A, "type", "veth", "peer",
                        "name", DEV_B, "netns", NS_B], check=True)
        for name, dev, address in ((NS_A, DEV_A, "10.77.0.1/24"), (NS_B, DEV_B, "10.77.0.2/24")):
            ns(name, "ip", "addr", "add", address, "dev", dev)
            ns(name, "ip", "link", "set", dev, "up")
            ns(name, "ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off")
        for name in (NS_A, NS_B):
            # as the bed sets hosts up: rto_min on the routes first (`ip` prints it back as
            # `rto_min lock`), then the room for the option
            host = Namespace(name)
            hostconfig.apply(host, HostSettings(rto_min_ms=200))
            reserve_option_room(host)
            assert f"advmss {ADVMSS}" in ns(name, "ip", "route", "show").stdout
        yield
    finally:
        for name in (NS_A, NS_B):
            subprocess.run(["ip", "netns", "del", name], capture_output=True)


def agent(name: str, dev: str, stats: Path, *flags: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(["ip", "netns", "exec", name, sys.executable, "-m",
                             "lgkit.schemes.vertigo_host", "--dev", dev, "--framed-ports",
                             str(PORT), "--stats", str(stats), *flags],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
    assert "ready" in proc.stdout.readline(), proc.stderr.read()
    return proc


RECEIVER = f"""
import socket, sys
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("10.77.0.2", {PORT})); srv.listen(1); print("up", flush=True)
conn, _ = srv.accept(); data = b""
while len(data) < {sum(SIZES)}:
    chunk = conn.recv(65536)
    if not chunk: break
    data += chunk
sys.stdout.buffer.write(data)
"""

SNIFFER = """
import socket, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800)); s.settimeout(0.5)
s.bind((sys.argv[1], 0)); print("up", flush=True); frames = []; end = time.time() + 60
while time.time() < end:
    try:
        ip = s.recv(65536)[14:]
    except TimeoutError:
        continue
    if ip[9] != 6: continue
    frames.append(ip.hex())
    if ip[12:16] == socket.inet_aton("10.77.0.1") and ip[(ip[0] & 15) * 4 + 13] & 1: break
print("\\n".join(frames))
"""
"Captures TCP on B's side until A's FIN."


def sent_segments(frames: list[bytes]) -> list[tuple[int, int, flowinfo.FlowInfo]]:
    """(stream offset, payload length, flowinfo) of each data segment A sent, as captured."""
    from_a = [f for f in frames if f[12:16] == socket.inet_aton("10.77.0.1")]
    syn = next(f for f in from_a if f[(f[0] & 0x0F) * 4 + 13] & 0x12 == 0x02)
    isn = struct.unpack_from("!I", syn, (syn[0] & 0x0F) * 4 + 4)[0]
    found = []
    for frame in from_a:
        header = (frame[0] & 0x0F) * 4
        seq = struct.unpack_from("!I", frame, header + 4)[0]
        length = struct.unpack_from("!H", frame, 2)[0] - header - (frame[header + 12] >> 4) * 4
        if length > 0:
            info = flowinfo.read(frame)
            assert info is not None, "an unmarked data segment"
            found.append(((seq - isn - 1) & 0xFFFFFFFF, length, info))
    return found


@pytest.mark.parametrize("engine", ["c", "python"])
def test_marks_on_the_wire_and_delivers_in_order(pair: None, tmp_path: Path, engine: str) -> None:
    sniffer = subprocess.Popen(["ip", "netns", "exec", NS_B, sys.executable, "-c", SNIFFER,
                                DEV_B], stdout=subprocess.PIPE, text=True)
    receiver = subprocess.Popen(["ip", "netns", "exec", NS_B, sys.executable, "-c", RECEIVER],
                                stdout=subprocess.PIPE)
    assert sniffer.stdout.readline().strip() == "up"
    assert receiver.stdout.readline().strip() == b"up"
    marker = agent(NS_A, DEV_A, tmp_path / "a.json", "--no-order", "--engine", engine)
    orderer = agent(NS_B, DEV_B, tmp_path / "b.json", "--no-mark", "--tau-us", "20000",
                    "--engine", engine)
    stream = b"".join(struct.pack("!II", size, i) + bytes([65 + i]) * (size - 8)
                      for i, size in enumerate(SIZES))
    sender = subprocess.run(["ip", "netns", "exec", NS_A, sys.executable, "-c",
                             "import socket,sys; s=socket.create_connection(('10.77.0.2', "
                             f"{PORT})); s.sendall(sys.stdin.buffer.read()); s.close()"],
                            input=stream, capture_output=True, timeout=30)
    assert sender.returncode == 0, sender.stderr
    received, _ = receiver.communicate(timeout=30)
    assert received == stream  # whole and in order, through both agents
    for proc in (marker, orderer):
        proc.terminate()
        assert proc.wait(10) == 0
    frames, _ = sniffer.communicate(timeout=30)
    sent = sent_segments([bytes.fromhex(f) for f in frames.split()])
    assert sum(length for _, length, _ in sent) >= len(stream)
    bounds = [sum(SIZES[:k]) for k in range(len(SIZES) + 1)]
    owner = [bisect.bisect_right(bounds, offset) - 1 for offset, _, _ in sent]
    begun = {k: min(o for (o, _, _), m in zip(sent, owner, strict=True) if m == k)
             for k in set(owner)}
    # every segment is marked with what remains of the message it begins in; the first
    # segment that begins inside a message is that message's first packet
    assert [(m.original_rfs, m.flow_id, m.first, m.aged) for _, _, m in sent] == [
        (bounds[k + 1] - offset, k, offset == begun[k], False)
        for (offset, _, _), k in zip(sent, owner, strict=True)]
    assert {0, 1, 3} <= set(begun)  # messages longer than a segment always have a first packet
    assert max(len(bytes.fromhex(f)) for f in frames.split()) <= 1500  # room was reserved
    stats_a = json.loads((tmp_path / "a.json").read_text())
    stats_b = json.loads((tmp_path / "b.json").read_text())
    assert stats_a["engine"] == stats_b["engine"] == engine
    # every segment sent for the first time was marked once (on a loaded machine TCP may also
    # retransmit after its FIN, where the capture stops: count first transmissions)
    first_sent = sum(1 for _, _, m in sent if m.retcnt == 0)
    marker_stats = stats_a["marker"]
    assert marker_stats["flows"] == len(SIZES)
    assert marker_stats["marked"] - marker_stats["retransmissions"] == first_sent
    # no flow waited for a first packet that never came
    assert stats_b["orderer"]["in_order"] == first_sent and stats_b["orderer"]["early"] == 0
    assert stats_b["orderer"]["passed"] == 0  # the rule's filter kept SYNs and ACKs in the kernel
    for name in (NS_A, NS_B):  # the agents took their rules with them
        rules = ns(name, "iptables-save").stdout
        assert "NFQUEUE" not in rules
