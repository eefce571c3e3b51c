"""Batched socket I/O (sendmmsg/recvmmsg) used by the switch ports: order, sizes, errors."""

from __future__ import annotations

import os
import socket
import subprocess

import pytest

from lgkit.sw.switch.mmsg import SLOT_BYTES, BatchReceiver, BatchSender


@pytest.fixture
def dgram_pair():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    for sock in (a, b):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    yield a, b
    a.close()
    b.close()


def _frames() -> list[bytes]:
    # sizes around the slot size, one larger than a slot in the middle, distinct contents
    sizes = [1, 60, 1514, SLOT_BYTES, SLOT_BYTES + 1, 9000, 2, 1400]
    return [bytes([i + 1]) * size for i, size in enumerate(sizes)]


def test_batch_send_keeps_order_and_sizes(dgram_pair):
    a, b = dgram_pair
    frames = _frames()
    assert BatchSender(a, batch=4).send(frames[:4]) == 0
    assert BatchSender(a, batch=8).send(frames[4:]) == 0
    b.setblocking(False)
    received = [b.recv(65535) for _ in frames]
    assert received == frames
    with pytest.raises(BlockingIOError):
        b.recv(65535)


def test_batch_receive_reads_what_is_waiting(dgram_pair):
    a, b = dgram_pair
    receiver = BatchReceiver(b, batch=3, frame_bytes=16384)
    assert receiver.receive() == []  # nothing waiting: no blocking, no error
    frames = _frames()
    for frame in frames:
        a.send(frame)
    got: list[bytes] = []
    while len(got) < len(frames):
        batch = receiver.receive()
        assert 0 < len(batch) <= 3
        got += batch
    assert got == frames
    assert receiver.receive() == []
    a.send(b"one")
    a.send(b"two")
    assert receiver.receive(limit=1) == [b"one"]
    assert receiver.receive(limit=5) == [b"two"]


def test_failed_sends_are_counted_not_raised(dgram_pair):
    a, b = dgram_pair
    b.close()  # the peer is gone: every send fails (ECONNREFUSED)
    sender = BatchSender(a, batch=4)
    assert sender.send([b"x" * 100, b"y" * 5000, b"z"]) == 3


def test_receive_error_is_raised(dgram_pair):
    _, b = dgram_pair
    receiver = BatchReceiver(b, batch=2, frame_bytes=2048)
    b.close()
    with pytest.raises(OSError):
        receiver.receive()


SNIFFER = """
import socket, struct, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x88B5))
s.setsockopt(socket.SOL_SOCKET, 33, 16 << 20)  # SO_RCVBUFFORCE: keep every frame
s.bind(("eth0", 0))
s.settimeout(5)
print("ready", flush=True)
seqs = []
try:
    while len(seqs) < int(sys.argv[1]):
        frame = s.recv(65535)
        seqs.append((struct.unpack_from(">I", frame, 14)[0], len(frame)))
except TimeoutError:
    pass
print(seqs)
"""


@pytest.mark.root
def test_port_transmit_ring_sends_everything_in_order():
    import ast
    import sys
    import threading

    from lgkit.sw.switch.ports import TX_BATCH, AfPacketPort
    from lgkit.sw.tools.bench_switch import HostPair

    count = 12 * TX_BATCH + 5  # many full rings and a partial one, flushed by close()
    with HostPair(f"m{os.getpid() % 10000}") as pair:
        for dev, prefix in ((pair.sw1, []), ("eth0", ["ip", "netns", "exec", pair.ns1])):
            subprocess.run([*prefix, "ip", "link", "set", dev, "mtu", "4000"], check=True)
        sniffer = pair.popen(pair.ns1, sys.executable, "-c", SNIFFER, str(count))
        assert sniffer.stdout is not None and sniffer.stdout.readline().strip() == "ready"
        port = AfPacketPort(pair.sw1)
        port.loop_thread = threading.get_ident()  # as the event loop: sends fill the ring
        try:
            header = bytes.fromhex(HostPair.H1_MAC.replace(":", "") + "0000000000aa" + "88b5")
            for seq in range(count):
                size = 3000 if seq % 50 == 7 else 60 + seq % 1400  # some beyond a batch slot
                port.send(header + seq.to_bytes(4, "big") + bytes(size))
        finally:
            port.close()  # sends what is on the ring first
        out, _ = sniffer.communicate(timeout=30)
    seqs = ast.literal_eval(out.strip().splitlines()[-1])
    assert [s for s, _ in seqs] == list(range(count))
    assert all(size == 18 + (3000 if s % 50 == 7 else 60 + s % 1400) for s, size in seqs)
    assert port.take_tx_errors() == 0
