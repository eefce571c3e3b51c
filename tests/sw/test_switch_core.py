"""The Switch object: CPU port, counters, pipeline replacement (virtual clock) and the real-time
event loop's timers."""

from __future__ import annotations

import json
import struct
import threading
import time
from pathlib import Path

import pytest
from testpaths import TESTS

from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.frontend.compiler import compile_file
from lgkit.sw.switch.clock import VirtualClock
from lgkit.sw.switch.control_service import CommandError, SwitchCommands, parse_value
from lgkit.sw.switch.loader import load_program
from lgkit.sw.switch.ports import PortLoop
from lgkit.sw.switch.switch import Switch

PROGRAM = (TESTS / Path(__file__).name).with_name("test_tm_program.p4")
BASIC = TESTS.parent / "p4" / "basic.p4"
CPU_PORT = 64


class Wire:
    """A port backend that records what the switch transmits."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def send(self, data: bytes) -> None:
        self.frames.append(data)


@pytest.fixture(scope="module")
def compiled():
    return compile_file(str(PROGRAM))


def frame(port: int, seq: int = 0) -> bytes:
    return struct.pack(">BBBB", port, 0, 0, seq) + bytes(60)


def make_switch(compiled) -> tuple[Switch, Wire, VirtualClock]:
    clock = VirtualClock()
    switch = Switch(cpu_port=CPU_PORT, clock=clock)
    switch.set_pipeline(Pipeline.load(compiled))
    wire = Wire()
    switch.add_port(2, wire)
    return switch, wire, clock


def test_packet_out_and_packet_in(compiled):
    switch, wire, clock = make_switch(compiled)
    packet_ins: list[bytes] = []
    switch.packet_in_handlers.append(packet_ins.append)
    switch.packet_out(frame(2, seq=1))
    switch.receive(2, frame(CPU_PORT, seq=2))
    clock.run_until()
    assert [f[3] for f in wire.frames] == [1]
    assert [f[3] for f in packet_ins] == [2]
    counters = switch.counters()["ports"]
    assert counters[CPU_PORT]["rx_packets"] == 1 and counters[CPU_PORT]["tx_packets"] == 1
    assert counters[2]["rx_packets"] == 1 and counters[2]["tx_packets"] == 1


def test_no_cpu_port_and_no_pipeline(compiled):
    switch = Switch(clock=VirtualClock())
    with pytest.raises(ValueError, match="no CPU port"):
        switch.packet_out(b"x" * 64)
    switch.receive(1, frame(2))
    assert switch.drops["no_pipeline"] == 1


def test_set_pipeline_discards_queued_packets(compiled):
    switch, wire, clock = make_switch(compiled)
    switch.tm.set_port_rate(1e6, 2, burst_bytes=0)
    for seq in range(3):
        switch.receive(1, frame(2, seq))
    assert switch.tm.queue_depths(2) == [2]  # the first is on the wire
    switch.set_pipeline(Pipeline.load(compiled))
    clock.run_until()
    assert [f[3] for f in wire.frames] == [0]
    assert switch.tm.queue_depths(2) == [0]


def test_port_numbers_are_checked(compiled):
    switch, _, _ = make_switch(compiled)
    with pytest.raises(ValueError, match="already attached"):
        switch.add_port(2, Wire())
    with pytest.raises(ValueError, match="CPU port"):
        switch.add_port(CPU_PORT, Wire())
    with pytest.raises(ValueError, match="bit<9>"):
        switch.add_port(512, Wire())


def test_real_time_queue_rate_with_frames_from_another_thread(compiled):
    switch = Switch()  # RealClock
    switch.set_pipeline(Pipeline.load(compiled))
    wire = Wire()
    switch.add_port(2, wire)
    switch.tm.set_queue_rate(2000, 2)  # one frame every 0.5 ms
    switch.tm.set_queue_depth(100, 2)
    loop = PortLoop(switch)
    thread = threading.Thread(target=loop.run)
    thread.start()
    try:
        with switch.lock:  # as a gRPC thread would
            for seq in range(40):
                switch.receive(1, frame(2, seq))
        deadline = time.monotonic() + 5
        while len(wire.frames) < 40 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        loop.stop()
        thread.join(5)
        loop.close()
    assert len(wire.frames) == 40
    # never faster than the rate: the k-th frame leaves the queue no earlier than k * 500 us
    # after the first was enqueued (egress_global_timestamp and enq_timestamp, written into the
    # frame by the program, in us); a late timer may let frames catch up to that schedule
    dequeued = [struct.unpack_from(">I", f, 28)[0] for f in wire.frames]
    first_enqueued = struct.unpack_from(">I", wire.frames[0], 4)[0]
    assert all(t - first_enqueued >= k * 500 - 1 for k, t in enumerate(dequeued)), dequeued
    assert dequeued[-1] - dequeued[0] < 10**6  # and it did not stall


def test_load_program_accepts_device_config_and_refuses_bad_input(tmp_path, compiled):
    config = tmp_path / "prog.json"
    config.write_text(json.dumps({"format": "lgkit-device-config", "version": 1,
                                  "program": "test_tm_program.p4",
                                  "source": compiled.source}))
    assert load_program(str(config)).tables == {}
    bmv2 = tmp_path / "bmv2.json"
    bmv2.write_text(json.dumps({"header_types": []}))
    with pytest.raises(ValueError, match="BMv2 JSON"):
        load_program(str(bmv2))
    broken = tmp_path / "broken.p4"
    broken.write_text("control C( { }\n")
    with pytest.raises(ValueError, match="broken.p4:1"):
        load_program(str(broken))


def test_control_commands_for_tables_registers_and_values():
    switch = Switch(clock=VirtualClock())
    switch.set_pipeline(load_program(str(BASIC)))
    cli = SwitchCommands(switch)
    assert parse_value("10.0.2.2") == 0x0A000202
    assert parse_value("00:00:00:00:02:02") == 0x202
    assert parse_value("0x1f") == 31 and parse_value("::1") == 1
    with pytest.raises(CommandError, match="not a value"):
        parse_value("10.0.0")
    cli.run("table_add ipv4_lpm ipv4_forward 10.0.2.0/24 => 00:00:00:00:02:02 2")
    cli.run("table_add MyIngress.dmac set_port 00:00:00:00:00:07 => 3")
    (entry,) = switch.pipeline.tables["MyIngress.ipv4_lpm"].entries()
    assert (entry.action, entry.params) == ("MyIngress.ipv4_forward", [0x202, 2])
    assert entry.keys[0].prefix_len == 24
    cli.run("table_set_default ipv4_lpm NoAction")
    assert switch.pipeline.tables["MyIngress.ipv4_lpm"].default_action[0] == "NoAction"
    assert cli.run("counter_read ingress_packets 1") == "packets=0 bytes=0"
    with pytest.raises(CommandError, match="has 1 key"):
        cli.run("table_add ipv4_lpm ipv4_forward 1 2 => 3 4")
    with pytest.raises(CommandError, match="no action"):
        cli.run("table_add ipv4_lpm frob 10.0.0.0/8 =>")
    cli.run("table_clear ipv4_lpm")
    assert switch.pipeline.tables["MyIngress.ipv4_lpm"].entries() == []
