"""The native port loop: frames through a switch on real veths carried by the C loop on its
PACKET_MMAP rings, a table and a port rate changed while it runs, registers and counters read
back, PFC pause and resume in its traffic manager, the hand-over to the Python loop when an
interface goes, the hand-overs between the switch's sockets and the rings (each frame read
once, in order), a frame larger than a ring slot, the fall-back without rings, a clean stop (no
socket, no mapping left), a spinning pass the watchdog stops; the device's untimed
frame-in/frames-out call against the Python engine, and its bad input."""

from __future__ import annotations

import os
import random
import select
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from testpaths import TESTS

from lgkit.sw.exec.native.build import compiler
from lgkit.sw.exec.native.device import NativeDevice
from lgkit.sw.exec.pipeline import Exact, Pipeline, TableEntry
from lgkit.sw.lang.frontend.compiler import compile_file, compile_source
from lgkit.sw.switch import ports as switch_ports
from lgkit.sw.switch.ports import AfPacketPort, PortLoop
from lgkit.sw.switch.switch import Switch

pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler (cc)")

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header h_t { bit<8> idx; bit<8> val; bit<8> rnd; }
struct headers { eth_t eth; h_t h; }
struct meta_t { bit<8> got; }
parser P(packet_in pk, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.eth); pk.extract(hdr.h); transition accept; }
}
control V(inout headers hdr, inout meta_t m) { apply { } }
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    register<bit<8>>(4) regs;
    counter(4, CounterType.packets_and_bytes) ctr;
    action fwd(bit<9> port) { sm.egress_spec = port; }
    action drop() { mark_to_drop(sm); }
    table route { key = { sm.ingress_port: exact; } actions = { fwd; drop; }
                  default_action = drop(); }
    apply {
        regs.read(m.got, (bit<32>)hdr.h.idx);
        regs.write((bit<32>)hdr.h.idx, m.got + 1);
        ctr.count((bit<32>)hdr.h.idx);
        hdr.h.val = m.got;
        random(hdr.h.rnd, 8w0, 8w255);
        route.apply();
    }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pk, in headers hdr) { apply { pk.emit(hdr.eth); pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""
ETHERTYPE = b"\x88\xb5"  # local experimental: nothing else on the veths carries it
WAIT_S = 10.0


def frame(idx: int) -> bytes:
    return b"\x02" * 6 + b"\x04" * 6 + ETHERTYPE + bytes([idx, 0, 0]) + bytes(43)


@pytest.fixture(scope="module")
def compiled():
    return compile_source(PROGRAM, "native_port.p4")


def native_pipeline(compiled) -> Pipeline:
    pl = Pipeline.load(compiled, seed=7, engine="native")
    assert type(pl.arch).__name__ == "NativeUntimed", "the program runs natively"
    return pl


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


@pytest.fixture
def veths() -> Iterator[dict[str, str]]:
    """Two veth pairs in this namespace: the switch on a1 (port 1) and b1 (port 2), the test
    on a0 and b0; IPv6 off so that the kernel sends nothing on them."""
    tag = f"np{os.getpid() % 100000}"
    names = {k: f"{tag}{k}" for k in ("a0", "a1", "b0", "b1")}
    try:
        for end in "ab":
            _ip("link", "add", names[f"{end}0"], "type", "veth", "peer", "name", names[f"{end}1"])
            for k in (f"{end}0", f"{end}1"):
                subprocess.run(["sysctl", "-qw", f"net.ipv6.conf.{names[k]}.disable_ipv6=1"],
                               check=False, capture_output=True)
                _ip("link", "set", names[k], "up")
        yield names
    finally:
        for end in "ab":
            subprocess.run(["ip", "link", "del", names[f"{end}0"]], capture_output=True)


def raw_socket(ifname: str) -> socket.socket:
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x88B5))
    sock.bind((ifname, 0x88B5))
    return sock


def receive(sock: socket.socket, count: int) -> list[bytes]:
    """Up to `count` frames of the test's ethertype within WAIT_S."""
    got: list[bytes] = []
    end = time.monotonic() + WAIT_S
    while len(got) < count and time.monotonic() < end:
        if select.select([sock], [], [], 0.1)[0]:
            data = sock.recv(65535)
            if data[12:14] == ETHERTYPE:
                got.append(data)
    return got


def ring_maps() -> int:
    """Sockets mapped into this process (PACKET_MMAP rings: two a port while the C loop runs)."""
    with open("/proc/self/maps") as maps:
        return sum("socket:[" in line for line in maps)


def wait_for(condition, what: str) -> None:
    end = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.01)


def finish(loop: PortLoop, thread: threading.Thread, *sockets: socket.socket) -> None:
    """Stop the switch's loop, wait for its thread, close the loop and the test's sockets."""
    loop.stop()
    thread.join(WAIT_S)
    loop.close()
    for sock in sockets:
        sock.close()


@contextmanager
def running(loop: PortLoop) -> Iterator[None]:
    """The loop on a thread of its own for the block; then stopped and closed."""
    thread = threading.Thread(target=loop.run)
    thread.start()
    try:
        yield
    finally:
        finish(loop, thread)
    assert not thread.is_alive()


@pytest.mark.root
def test_native_loop_forwards_follows_tables_and_settings(compiled, veths, caplog):
    fds_before = sorted(os.listdir("/proc/self/fd"))
    maps_before = ring_maps()
    switch = Switch()
    pl = native_pipeline(compiled)
    switch.set_pipeline(pl)
    loop = PortLoop(switch, pass_budget_s=0)
    loop.add_interface(1, veths["a1"])
    loop.add_interface(2, veths["b1"])
    sender, sink = raw_socket(veths["a0"]), raw_socket(veths["b0"])
    after_seed = random.Random()
    after_seed.setstate(pl.rng.getstate())
    after_seed.getrandbits(64)  # the C loop's seed: then no draw from Python per packet
    thread = threading.Thread(target=loop.run)
    thread.start()
    try:
        wait_for(lambda: loop.native_sessions == 1, "the C loop")
        assert ring_maps() == maps_before + 4  # a receive and a transmit ring a port
        for _ in range(20):  # no route yet: dropped by the table's default action
            sender.send(frame(1))
        wait_for(lambda: switch.drops["ingress_drop"] == 20, "20 ingress drops")
        with switch.lock:  # as the P4Runtime server writes
            pl.tables["I.route"].insert(TableEntry([Exact(1)], "I.fwd", [2]))
        time.sleep(0.1)  # the loop picks the table up within POLL_S (5 ms)
        for _ in range(100):
            sender.send(frame(1))
        got = receive(sink, 100)
        assert len(got) == 100
        assert [f[15] for f in got] == list(range(20, 120))  # the register as it counted
        assert len({f[16] for f in got}) > 10  # random() drew, in C
        assert pl.rng.getstate() == after_seed.getstate()
        assert pl.registers["I.regs"].values[1] == 120
        assert (pl.counters["I.ctr"].packets[1], pl.counters["I.ctr"].bytes[1]) == (120, 120 * 60)
        wait_for(lambda: switch.counters()["ports"].get(2, {}).get("tx_packets") == 100,
                 "the port counters")
        ports = switch.counters()["ports"]
        assert ports[1]["rx_packets"] == 120 and ports[1]["rx_bytes"] == 120 * 60
        assert switch.passes["ingress"] == 120 and switch.passes["egress"] == 100
        assert loop.native_sessions == 1
        with switch.lock:  # a shaped port: the C loop's traffic manager shapes it
            switch.tm.set_port_rate(1e9, 2)
        for _ in range(10):
            sender.send(frame(2))
        assert [f[15] for f in receive(sink, 10)] == list(range(10))
        assert pl.registers["I.regs"].values[2] == 10
        assert loop.native_sessions == 1 and any(t.name == "native-port-loop"
                                                  for t in threading.enumerate())
    finally:
        finish(loop, thread, sender, sink)
    assert not thread.is_alive()
    assert not any(t.name == "native-port-loop" for t in threading.enumerate())
    assert sorted(os.listdir("/proc/self/fd")) == fds_before
    assert ring_maps() == maps_before
    assert "PACKET_MMAP" not in caplog.text


def test_device_frame_matches_the_python_engine(compiled):
    native = native_pipeline(compiled)
    python = Pipeline.load(compiled, seed=7, engine="python")
    device = NativeDevice(native.arch.native, 0)  # type: ignore[attr-defined]
    try:
        for pl in (native, python):
            pl.tables["I.route"].insert(TableEntry([Exact(1)], "I.fwd", [2]))
        native.arch.native.refresh()  # type: ignore[attr-defined]
        for idx in (0, 1, 1, 3, 1):
            expected = python.run_untimed(1, frame(idx))
            assert device.frame(1, frame(idx), 5000)[0] == expected
        assert device.frame(2, frame(0), 5000)[0] == python.run_untimed(2, frame(0)) == []
        assert native.registers["I.regs"].values[:] == python.registers["I.regs"].values[:]
        counters = device.counters()
        assert (counters["ingress"], counters["egress"], counters["ingress_drop"]) == (6, 5, 1)
    finally:
        device.close()
    assert len(native.arch.native.contexts) == 1  # type: ignore[attr-defined]


def test_device_refuses_bad_ports(compiled):
    device = NativeDevice(native_pipeline(compiled).arch.native, 0)  # type: ignore[attr-defined]
    try:
        with pytest.raises(ValueError, match="0..511"):
            device.add_port(512, 0)
        device.add_port(1, 0)
        with pytest.raises(ValueError, match="0..511"):
            device.add_port(1, 0)  # taken
    finally:
        device.close()


def routed_switch(compiled, veths: dict[str, str]) -> tuple[Switch, PortLoop]:
    """A switch on a1 (port 1) and b1 (port 2) routing port 1 to port 2, its loop not run."""
    switch = Switch()
    pl = native_pipeline(compiled)
    pl.tables["I.route"].insert(TableEntry([Exact(1)], "I.fwd", [2]))
    switch.set_pipeline(pl)
    loop = PortLoop(switch, pass_budget_s=0)
    loop.add_interface(1, veths["a1"])
    loop.add_interface(2, veths["b1"])
    return switch, loop


@pytest.mark.root
def test_native_loop_hands_a_deleted_interface_to_the_python_loop(compiled, veths, caplog):
    switch, loop = routed_switch(compiled, veths)
    sender = raw_socket(veths["a0"])
    thread = threading.Thread(target=loop.run)
    thread.start()
    try:
        wait_for(lambda: loop.native_sessions == 1, "the C loop")
        _ip("link", "del", veths["b0"])  # port 2's interface is gone
        wait_for(lambda: 2 not in switch.ports, "port 2 detached")
        wait_for(lambda: loop.native_sessions == 2, "the C loop back on port 1")
        sender.send(frame(1))
        wait_for(lambda: switch.drops["no_such_port"] == 1, "the frame for port 2 counted")
    finally:
        finish(loop, thread, sender)
    assert "interface" in caplog.text and "is gone" in caplog.text


def pfc_frame(quanta: int) -> bytes:
    """802.1Qbb: pause priority 0 for `quanta`."""
    return (bytes.fromhex("0180c2000001") + b"\x04" * 6 + b"\x88\x08" + bytes.fromhex("01010001")
            + quanta.to_bytes(2, "big") + bytes(14)).ljust(60, b"\0")


@pytest.mark.root
def test_pfc_frames_pause_and_resume_a_queue_of_the_native_loop(compiled, veths):
    switch, loop = routed_switch(compiled, veths)
    sender, sink = raw_socket(veths["a0"]), raw_socket(veths["b0"])
    pfc = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    pfc.bind((veths["b0"], 0))  # from port 2's peer: port 2's queue 0 pauses
    with switch.lock:  # at 1 Mb/s a pause of 0xFFFF quanta lasts 33.6 s
        switch.tm.set_port_rate(1e6, 2)
    thread = threading.Thread(target=loop.run)
    thread.start()
    try:
        wait_for(lambda: loop.native_sessions == 1, "the C loop")
        pfc.send(pfc_frame(0xFFFF))
        wait_for(lambda: switch.counters()["ports"][2]["rx_packets"] == 1, "the PFC frame")
        for _ in range(5):
            sender.send(frame(1))
        assert not _arrives(sink, 0.5)  # held: paused for 33.6 s
        pfc.send(pfc_frame(0))  # resume
        assert [f[15] for f in receive(sink, 5)] == list(range(5))
        assert loop.native_sessions == 1  # the C loop kept the ports throughout
        wait_for(lambda: switch.counters()["ports"][2]["rx_packets"] == 2, "the counters")
        assert switch.passes["ingress"] == 5  # the PFC frames were the MAC's, not the pipeline's
    finally:
        finish(loop, thread, sender, sink, pfc)


@pytest.mark.root
def test_the_watchdog_stops_a_pass_spinning_in_the_native_loop(veths):
    """A frame whose ingress loops for ~4e9 iterations in the C loop is aborted by the pass
    watchdog within its CPU budget (dropped, counted as pass_timeout only), and the loop goes
    on with the next frame."""
    compiled = compile_file(str(TESTS / "p4" / "reliability" / "slow_pass.p4"))
    pl = Pipeline.load(compiled, engine="native")
    pl.max_loop_iterations = 1 << 62  # the watchdog, not the loop bound, ends the pass
    switch = Switch()
    switch.set_pipeline(pl)
    loop = PortLoop(switch, pass_budget_s=0.2)
    loop.add_interface(1, veths["a1"])
    loop.add_interface(2, veths["b1"])
    sender, sink = raw_socket(veths["a0"]), raw_socket(veths["b0"])
    thread = threading.Thread(target=loop.run)
    thread.start()
    try:
        wait_for(lambda: loop.native_sessions == 1, "the C loop")
        tail = bytes(10) + ETHERTYPE + bytes(46)  # the test's EtherType at bytes 12-13
        sender.send(bytes([1, 2]) + tail)  # spins
        sender.send(bytes([0, 2]) + tail)  # out of port 2 once the first is aborted
        assert receive(sink, 2) == [bytes([0, 2]) + tail]
        wait_for(lambda: switch.drops["pass_timeout"] == 1, "the pass timeout counted")
        assert (switch.drops["ingress_drop"], switch.passes["ingress"]) == (0, 2)
        assert loop.native_sessions == 1 and pl.logs == []  # no loop-bound line
    finally:
        finish(loop, thread, sender, sink)
    assert not thread.is_alive()


def _arrives(sock: socket.socket, seconds: float) -> bool:
    """Whether a frame of the test's ethertype arrives within `seconds`."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if select.select([sock], [], [], 0.05)[0] and sock.recv(2048)[12:14] == ETHERTYPE:
            return True
    return False


@pytest.mark.root
def test_frames_queued_before_the_rings_run_first_and_big_frames_pass(compiled, veths):
    for name in veths.values():
        _ip("link", "set", name, "mtu", "9000")
    switch, loop = routed_switch(compiled, veths)
    sender, sink = raw_socket(veths["a0"]), raw_socket(veths["b0"])
    big = frame(3)[:17] + bytes(range(256)) * 16  # 4113 B: larger than a ring slot (2 KiB)
    for _ in range(5):  # on the switch's socket: no loop reads it yet
        sender.send(frame(1))
    try:
        with running(loop):
            wait_for(lambda: loop.native_sessions == 1, "the C loop")
            for _ in range(5):
                sender.send(frame(1))
            sender.send(big)
            sender.send(frame(3))
            got = receive(sink, 12)
    finally:
        sender.close()
        sink.close()
    assert [f[15] for f in got[:10]] == list(range(10))  # the queued five first
    assert got[10][:15] == big[:15] and got[10][17:] == big[17:]
    assert got[11][15] == 1
    assert switch.passes["ingress"] == 12 and loop.native_sessions == 1  # all in the C loop


@pytest.mark.root
def test_a_ring_gives_its_frames_back_each_read_once_in_order(compiled, veths):
    """A ring takes the port's frames from the switch's socket; given back, what it holds is
    handed over and the socket gets the rest: every frame in exactly one of them, in order."""
    port = AfPacketPort(veths["a1"])
    device = NativeDevice(native_pipeline(compiled).arch.native, 0)  # type: ignore[attr-defined]
    sender = raw_socket(veths["a0"])
    try:
        device.add_port(1, port.fileno())
        assert device.add_ring(1) == 0
        for idx in range(10):
            sender.send(frame(idx))
        wait_for(lambda: device.ring_frames(1) == 10, "10 frames on the ring")
        handed = device.handed()
        for idx in range(10, 15):
            sender.send(frame(idx))
        queued: list[bytes] = []
        end = time.monotonic() + WAIT_S
        while len(queued) < 5 and time.monotonic() < end:
            select.select([port], [], [], 0.1)
            queued += [f for f in port.read_batch() if f[12:14] == ETHERTYPE]
        assert len(handed) == 10 and {p for p, _ in handed} == {1}
        assert [f[14] for _, f in handed] + [f[14] for f in queued] == list(range(15))
    finally:
        device.close()
        port.close()
        sender.close()


@pytest.mark.root
def test_without_a_fanout_group_the_loop_reads_the_sockets(compiled, veths, caplog,
                                                           monkeypatch):
    monkeypatch.setattr(switch_ports, "FANOUT_JOIN", 0xFF << 16)  # no such fanout type: not joined
    maps_before = ring_maps()
    switch, loop = routed_switch(compiled, veths)
    sender, sink = raw_socket(veths["a0"]), raw_socket(veths["b0"])
    try:
        with running(loop):
            wait_for(lambda: loop.native_sessions == 1, "the C loop")
            assert ring_maps() == maps_before
            for _ in range(5):
                sender.send(frame(1))
            got = receive(sink, 5)
    finally:
        sender.close()
        sink.close()
    assert [f[15] for f in got] == list(range(5))
    lines = [r.getMessage() for r in caplog.records if "PACKET_MMAP" in r.getMessage()]
    assert lines == ["native port loop: no PACKET_MMAP ring on port 1 (Operation not "
                     "supported): it reads 2 port(s) with recvmmsg"]
