"""Traffic manager through a real P4 program in virtual time: priority, rates, overflow, clone,
multicast, recirculate, resubmit, drop counters, and the switch-cli commands."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from testpaths import TESTS

from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.frontend.compiler import compile_file
from lgkit.sw.switch.control_service import CommandError, SwitchCommands
from lgkit.sw.switch.vnet import VirtualNetwork

PROGRAM = (TESTS / Path(__file__).name).with_name("test_tm_program.p4")
CTL = struct.Struct(">BBBBIIIIIHBBI")
FRAME_BYTES = 100
FRAMING = 24  # vnet's default Ethernet overhead per frame


@pytest.fixture(scope="module")
def compiled():
    return compile_file(str(PROGRAM))


def frame(port: int, prio: int = 0, op: int = 0, seq: int = 0) -> bytes:
    head = CTL.pack(port, prio, op, seq, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    return head + bytes(FRAME_BYTES - len(head))


def fields(data: bytes) -> dict[str, int]:
    names = ("port", "prio", "op", "seq", "enq_ts", "deq_td", "enq_qdepth", "deq_qdepth",
             "ingress_ts", "rid", "itype", "passes", "egress_ts")
    return dict(zip(names, CTL.unpack_from(data), strict=True))


def wire_ns(nbytes: int, rate_bps: float) -> float:
    return (nbytes + FRAMING) * 8 * 1e9 / rate_bps


def network(compiled, out_rate_bps: float = 100e9, priority_queues: int = 3, hosts: int = 3):
    """h1 -> s1 port 1 at 100G; s1 port 2 -> h2 and port 3 -> h3 at `out_rate_bps`."""
    net = VirtualNetwork(seed=1)
    s1 = net.add_switch("s1", Pipeline.load(compiled), priority_queues=priority_queues)
    h = [net.add_host(f"h{i}") for i in range(1, hosts + 1)]
    net.link(h[0], s1, port=1, rate_bps=100e9)
    for i in range(1, hosts):
        net.link(s1, h[i], port=i + 1, rate_bps=out_rate_bps)
    return net, s1, h


def test_high_priority_overtakes_queued_low_priority(compiled):
    net, s1, (h1, h2, _) = network(compiled, out_rate_bps=10e6)
    for seq in range(4):
        h1.send(frame(2, prio=0, seq=seq), at_ns=0)
    h1.send(frame(2, prio=2, seq=9), at_ns=0)
    net.run()
    got = [fields(d) for _, d in h2.received]
    assert [f["seq"] for f in got] == [0, 9, 1, 2, 3]
    # Arrival at s1 of the k-th frame (k from 1): k * 9.92 ns, rounded up; on the 10 Mb/s port
    # each frame takes 99.2 us, back to back after the first.
    first_arrival = -(-wire_ns(FRAME_BYTES, 100e9) // 1)
    per_frame = wire_ns(FRAME_BYTES, 10e6)
    assert [t for t, _ in h2.received] == [round(first_arrival + k * per_frame)
                                           for k in range(1, 6)]
    high = got[1]
    assert high["enq_qdepth"] == 0  # its own (priority 2) queue was empty
    assert high["deq_td"] == int((first_arrival + per_frame - 50) // 1000)
    assert [f["enq_qdepth"] for f in got[2:]] == [0, 1, 2]
    assert [f["deq_qdepth"] for f in got[2:]] == [2, 1, 0]
    assert s1.tm.queue_depths(2) == [0, 0, 0]


def test_queue_rate_spaces_departures_exactly(compiled):
    net, s1, (h1, h2, _) = network(compiled)
    SwitchCommands(s1).run("set_queue_rate 1000 2")
    for seq in range(5):
        h1.send(frame(2, seq=seq), at_ns=0)
    net.run()
    times = [t for t, _ in h2.received]
    assert len(times) == 5
    assert [b - a for a, b in zip(times, times[1:], strict=False)] == [1_000_000] * 4
    got = [fields(d) for _, d in h2.received]
    assert [f["deq_td"] for f in got] == [0, 999, 1999, 2999, 3999]


def test_queue_overflow_drops_and_counts(compiled):
    net, s1, (h1, h2, _) = network(compiled, out_rate_bps=10e6)
    SwitchCommands(s1).run("set_queue_depth 3 2")
    for seq in range(10):
        h1.send(frame(2, seq=seq), at_ns=0)
    net.run()
    assert [fields(d)["seq"] for _, d in h2.received] == [0, 1, 2, 3]
    assert s1.drops["queue_full"] == 6


def test_bad_priority_and_pipeline_drop_are_counted(compiled):
    net, s1, (h1, h2, _) = network(compiled)
    h1.send(frame(2, prio=5), at_ns=0)
    h1.send(frame(2, op=5), at_ns=100)
    h1.send(frame(7), at_ns=200)  # no such port
    h1.send(frame(2, seq=1), at_ns=300)
    net.run()
    assert [fields(d)["seq"] for _, d in h2.received] == [1]
    assert s1.drops["bad_priority"] == 1
    assert s1.drops["ingress_drop"] == 1
    assert s1.drops["no_such_port"] == 1
    assert "bad_priority: 1" in SwitchCommands(s1).run("show_drops")


def test_port_rate_limits_throughput(compiled):
    net, s1, (h1, h2, _) = network(compiled)
    SwitchCommands(s1).run("set_port_rate 8e6 2 0")  # 8 Mb/s, no burst: 124 us per frame
    for seq in range(3):
        h1.send(frame(2, seq=seq), at_ns=0)
    net.run()
    times = [t for t, _ in h2.received]
    assert [b - a for a, b in zip(times, times[1:], strict=False)] == [124_000, 124_000]


def test_i2e_and_e2e_clone(compiled):
    net, s1, (h1, h2, h3) = network(compiled)
    cli = SwitchCommands(s1)
    cli.run("mirroring_add 5 3")
    h1.send(frame(2, op=1, seq=1), at_ns=0)
    h1.send(frame(2, op=6, seq=2), at_ns=1000)
    net.run()
    assert [(fields(d)["seq"], fields(d)["itype"]) for _, d in h2.received] == [(1, 0), (2, 0)]
    assert [(fields(d)["seq"], fields(d)["itype"]) for _, d in h3.received] == [(1, 1), (2, 2)]
    assert cli.run("mirroring_get 5") == "port=3 rid=0"
    cli.run("mirroring_delete 5")
    h1.send(frame(2, op=1, seq=3), at_ns=net.now_ns + 10)
    net.run()
    assert len(h3.received) == 2 and len(h2.received) == 3


def test_multicast_group_replicates_with_rid(compiled):
    net, s1, (h1, h2, h3) = network(compiled)
    cli = SwitchCommands(s1)
    cli.run("mc_mgrp_create 1")
    handle = int(cli.run("mc_node_create 7 3 2").split()[-1])
    cli.run(f"mc_node_associate 1 {handle}")
    assert s1.pipeline.mc_groups[1] == [(7, 2), (7, 3)]
    h1.send(frame(9, op=2), at_ns=0)
    net.run()
    for host in (h2, h3):
        (f,) = [fields(d) for _, d in host.received]
        assert (f["rid"], f["itype"]) == (7, 5)
    cli.run(f"mc_node_dissociate 1 {handle}")
    h1.send(frame(9, op=2), at_ns=net.now_ns + 10)
    net.run()
    assert len(h2.received) == 1 and len(h3.received) == 1
    with pytest.raises(CommandError):
        cli.run("mc_node_associate 2 0")


def test_recirculate_and_resubmit_take_a_second_pass(compiled):
    net, s1, (h1, h2, _) = network(compiled)
    h1.send(frame(2, op=3, seq=1), at_ns=0)
    h1.send(frame(2, op=4, seq=2), at_ns=1000)
    h1.send(frame(2, op=0, seq=3), at_ns=2000)
    net.run()
    got = {fields(d)["seq"]: fields(d) for _, d in h2.received}
    assert {seq: f["passes"] for seq, f in got.items()} == {1: 2, 2: 2, 3: 1}


def test_input_queue_capacity_with_pass_latency(compiled):
    net = VirtualNetwork(seed=1)
    s1 = net.add_switch("s1", Pipeline.load(compiled), pass_latency_ns=1_000_000)
    h1, h2 = net.add_host("h1"), net.add_host("h2")
    net.link(h1, s1, port=1, rate_bps=100e9)
    net.link(s1, h2, port=2, rate_bps=100e9)
    s1.tm.set_queue_depth(2000)
    for seq in range(1100):
        h1.send(frame(2, seq=seq % 256), at_ns=0)
    net.run()
    assert s1.drops["input_queue_full"] == 1100 - 1024
    assert len(h2.received) == 1024
    # ingress pass, then egress pass: two latencies between arrival and the wire
    assert h2.received[0][0] >= 2_000_000


def test_bad_commands_give_clear_errors(compiled):
    net, s1, _ = network(compiled)
    cli = SwitchCommands(s1)
    for line, message in [("set_queue_depth", "usage"), ("set_queue_rate x", "number"),
                          ("frobnicate 1", "unknown command"),
                          ("set_queue_depth 4 1 9", "priority must be in 0..2, got 9"),
                          ("mc_node_associate 1 0", "does not exist")]:
        with pytest.raises(CommandError, match=message):
            cli.run(line)
