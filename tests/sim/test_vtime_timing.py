"""The timing model of the virtual-time stress tests: each switch latency delays its own path,
the traffic manager's clone lane, cell counting, PFC pause and minimum frame, and what the
calibrated model gives (buffers measured as the paper did, Table 4's loops, t_flight_resume)."""

from __future__ import annotations

import struct
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from testpaths import TESTS

from lgkit.sim.stress import StressRun, StressSpec, run_stress
from lgkit.sim.timing import MTU_WIRE_BYTES, TimingModel
from lgkit.sw.exec.jobs import EgressJob
from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.frontend.compiler import compile_file
from lgkit.sw.switch.clock import VirtualClock
from lgkit.sw.switch.control_service import SwitchCommands
from lgkit.sw.switch.tm import TrafficManager
from lgkit.sw.switch.vnet import VirtualNetwork

PROGRAM = (TESTS / Path(__file__).name).with_name("test_tm_program.p4")
CTL = struct.Struct(">BBBBIIIIIHBBI")


@pytest.fixture(scope="module")
def compiled():
    return compile_file(str(PROGRAM))


def frame(port: int, op: int = 0, seq: int = 0) -> bytes:
    """Ask test_tm_program.p4 for `port` and `op` (1 I2E clone, 3 recirculate, 6 E2E clone)."""
    head = CTL.pack(port, 0, op, seq, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    return head + bytes(100 - len(head))


def test_each_latency_delays_its_own_path(compiled) -> None:
    net = VirtualNetwork(seed=1)
    s1 = net.add_switch("s1", Pipeline.load(compiled), ingress_latency_ns=100,
                        egress_latency_ns=200, recirc_latency_ns=300, clone_latency_ns=400)
    h1, h2, h3 = (net.add_host(f"h{i}") for i in (1, 2, 3))
    for port, host in ((1, h1), (2, h2), (3, h3)):
        net.link(host, s1, port=port, rate_bps=100e9)
    SwitchCommands(s1).run("mirroring_add 5 3")
    for seq, op in enumerate((0, 3, 1, 6)):
        h1.send(frame(2, op, seq), at_ns=10_000 * seq)
    net.run()
    wire = 10  # (100 + 24) B at 100 Gb/s, rounded up at the far end
    arrival = {seq: 10_000 * seq + wire for seq in range(4)}
    to_h2 = {d[3]: t - arrival[d[3]] for t, d in h2.received}
    to_h3 = {d[3]: t - arrival[d[3]] for t, d in h3.received}
    assert to_h2 == {0: 100 + 200 + wire,
                     1: 100 + (wire + 300) + 100 + 200 + wire,  # the recirculated one
                     2: 100 + 200 + wire, 3: 100 + 200 + wire}
    assert to_h3 == {2: 100 + 400 + 200 + wire,  # I2E clone: ingress, mirror, egress
                     3: 100 + 400 + 200 + wire}  # E2E clone: its egress pass starts with it


def egress_job(length: int, instance_type: int = 0, port: int = 7) -> EgressJob:
    return EgressJob(port, 0, instance_type, 0, length, None)


def traffic_manager() -> tuple[VirtualClock, TrafficManager, list[tuple[int, int, int]]]:
    clock = VirtualClock()
    sent: list[tuple[int, int, int]] = []

    def transmit(job: EgressJob, *_: int) -> int:
        sent.append((clock.now_ns(), job.instance_type, job.length))
        return job.length

    return clock, TrafficManager(clock, 3, transmit), sent


def test_clone_lane_serializes_clones_apart_from_the_port() -> None:
    clock, tm, sent = traffic_manager()
    tm.set_port_rate(10e9, 7, burst_bytes=0, framing_bytes=24)  # 1024 B: 819.2 ns
    tm.set_clone_lane(7, 100e9, framing_bytes=24)  # 81.92 ns
    for _ in range(3):
        tm.enqueue(egress_job(1000))
        tm.enqueue(egress_job(1000, instance_type=2))
    clock.run_until(10_000)
    assert [t for t, kind, _ in sent if kind == 0] == [0, 820, 1639]
    assert [t for t, kind, _ in sent if kind == 2] == [0, 82, 164]
    assert tm.wire_ns(7, 1000) == 820 and tm.wire_ns(7, 1000, lane=True) == 82


def test_queue_cells_watermark_pause_and_minimum_frame() -> None:
    clock, tm, sent = traffic_manager()
    tm.count_cells(80)
    tm.set_port_rate(1e9, 7, burst_bytes=0, framing_bytes=24, min_frame_bytes=60)
    tm.set_paused(7, 0, True)
    for length in (17, 81, 1519):
        tm.enqueue(egress_job(length))
    clock.run_until(100_000)
    assert sent == []  # paused: nothing leaves
    assert tm.queue_cells(7, 0) == (1 + 2 + 19, 22)
    tm.set_paused(7, 0, False)
    clock.run_until(100_000_000)
    # a 17-byte frame is padded to 60 on the wire: (60 + 24) B at 1 Gb/s = 672 ns
    assert [t for t, _, _ in sent] == [100_000, 100_672, 100_672 + 840]
    assert tm.queue_cells(7, 0) == (0, 22)
    tm.reset_watermarks()
    assert tm.queue_cells(7, 0) == (0, 0)


def spec(**fields: object) -> StressSpec:
    base = {"rate_gbps": 100.0, "loss": 1e-3, "mode": "lg", "frames": 4_000,
            "warmup_frames": 500, "seed": 3}
    return StressSpec(**{**base, **fields})  # type: ignore[arg-type]


@pytest.mark.slow
def test_t_flight_resume_is_two_egress_passes_two_links_a_frame_and_the_filter() -> None:
    for egress in (350, 450):
        timing = TimingModel(egress_latency_ns=egress)
        result = run_stress(spec(timing=timing))
        assert result.counters["resumes"] > 0 and len(result.resume_flights_ns) > 0
        frame_ns = (1514 + 5 + 24) * 8 / 100  # an LG data frame at 100G
        resume_ns = (60 + 24) * 8 / 100  # the resume frame, padded
        expected = (2 * egress + 2 * timing.link_delay_ns + frame_ns + resume_ns
                    + timing.receiver_filter_ns)
        assert all(abs(f - expected) <= 2 for f in result.resume_flights_ns)
    assert TimingModel().receiver_filter_ns == 350 + round(MTU_WIRE_BYTES * 8 / 100) + 250


@pytest.mark.slow
def test_the_sender_pauses_its_queue_in_place_and_the_program_holds_nothing() -> None:
    run = StressRun(spec(frames=3_000))
    result = run.run()
    assert result.counters["pauses"] > 0
    for register in ("lg_tx_hold_head", "lg_tx_hold_tail"):
        assert run.net.register("s1", register) == 0


@pytest.mark.slow
def test_buffers_are_the_recirculation_queues_watermarks_in_cells() -> None:
    result = run_stress(spec(mode="lg_nb"))
    cell = TimingModel().cell_bytes
    assert 0 < result.tx_max_bytes <= result.tx_alive_max_bytes
    assert result.tx_max_bytes % cell == 0 and max(result.tx_samples) <= result.tx_max_bytes
    # at 25G the copies loop through a 100G port: never more than two wait at once (§4.5)
    slow = run_stress(spec(rate_gbps=25.0, mode="lg_nb", frames=6_000))
    assert 0 < slow.tx_max_bytes <= 3_600 < slow.tx_alive_max_bytes


def test_table4_counts_the_loops_of_the_recirculation_port() -> None:
    # At 100G the copies' loop port is saturated: each copy loops once after its mirror pass.
    run = StressRun(spec(mode="lg_nb"))
    result = run.run()
    copies = result.generated - result.tail_drops  # one per data frame sent, warm-up's too
    assert run.s1.lane_recirculations == copies
    frames_per_s = result.effective_gbps * 1e9 / result.frame_wire_bits
    per_frame = result.recirc_overhead("tx") / 100 * TimingModel().pipeline_capacity_pps
    assert per_frame / frames_per_s == pytest.approx(1.0, rel=0.05)


@pytest.mark.slow
def test_a_longer_loop_means_fewer_loops_per_copy() -> None:
    def overhead(recirc_ns: int) -> float:
        timing = replace(TimingModel(), recirc_latency_ns=recirc_ns)
        return run_stress(spec(rate_gbps=25.0, mode="lg_nb", frames=2_000,
                               timing=timing)).recirc_overhead("tx")

    assert overhead(100) > overhead(250) > overhead(600)


def test_explicit_acks_leave_one_clone_latency_apart() -> None:
    for clone_ns in (400, 700):
        run = StressRun(spec(frames=1_500, loss=0.0, timing=TimingModel(
            clone_latency_ns=clone_ns)))
        arrivals: list[int] = []
        run.net.link.backward.taps.append(lambda _d, _l, t, seen=arrivals: seen.append(t))
        run.run()
        gaps = Counter(b - a for a, b in zip(arrivals, arrivals[1:], strict=False))
        assert gaps.most_common(1)[0][0] == clone_ns


def test_the_paused_queue_tail_drops_and_drains_before_the_run_ends() -> None:
    # The authors' pktgen sends every 124 ns also at 25G: the normal queue fills and tail-drops;
    # what it holds at the end (here ~0.3 ms of the link) still crosses and is delivered.
    timing = TimingModel(paused_queue_bytes=1_000_000)
    result = run_stress(spec(rate_gbps=25.0, frames=3_000, period_ps=124_000, timing=timing))
    assert result.tail_drops > 1_000
    assert result.protected > 900 and result.lost_onward == 0 == result.unrecovered_holes
