"""Virtual-time building blocks of the stress tests: the line-rate generator's exact spacing,
frame mixes, truncated loss gaps, bursty losses, byte-capped queues and charged recirculation."""

from __future__ import annotations

import random

import pytest

from lgkit.core.frames import FrameStream, packet_id
from lgkit.sim.scenario import HOSTS
from lgkit.sw.exec.jobs import EgressResult, IngressJob
from lgkit.sw.switch.clock import VirtualClock
from lgkit.sw.switch.loss import GilbertElliott, IidLoss, TruncatedGaps
from lgkit.sw.switch.switch import Switch
from lgkit.sw.switch.tm import TrafficManager
from lgkit.sw.switch.vnet import LineRateSource


def generate(rate_bps: float, frames: list[bytes], **options: object) -> list[int]:
    clock = VirtualClock()
    times: list[int] = []
    LineRateSource(clock, lambda _data: times.append(clock.now_ns()), rate_bps, frames,
                   **options)  # type: ignore[arg-type]
    clock.run_until()
    return times


def mtu_frames(count: int) -> list[bytes]:
    stream = FrameStream(HOSTS["h1"], HOSTS["h2"])
    return [stream.frame(1514) for _ in range(count)]


@pytest.mark.parametrize(("rate", "period_ps"), [(100e9, 123_040), (25e9, 492_160)])
def test_mtu_frames_back_to_back_at_the_link_rate(rate: float, period_ps: int) -> None:
    # 1514 B + 24 B of preamble, FCS and gap = 1538 B on the wire: 123.04 ns at 100G.
    times = generate(rate, mtu_frames(1001), start_ns=7)
    assert times == [7 + -(-k * period_ps // 1000) for k in range(1001)]
    assert times[-1] - times[0] == 1000 * period_ps // 1000  # no drift over 1000 frames
    spacings = {b - a for a, b in zip(times, times[1:], strict=False)}
    assert spacings == {period_ps // 1000, period_ps // 1000 + 1}


def test_fixed_period_like_tofino_pktgen_and_stop_time() -> None:
    ended: list[int] = []
    clock = VirtualClock()
    times: list[int] = []
    LineRateSource(clock, lambda _d: times.append(clock.now_ns()), 100e9, mtu_frames(50),
                   period_ps=124_000, until_ns=1_240, on_end=lambda: ended.append(clock.now_ns()))
    clock.run_until()
    assert times == [124 * k for k in range(11)]
    assert ended == [1_240]


def test_a_frame_mix_spaces_each_frame_by_its_own_wire_time() -> None:
    stream = FrameStream(HOSTS["h1"], HOSTS["h2"], mix=((64, 1.0), (1514, 1.0)), seed=4)
    frames = [stream.frame(stream.next_size()) for _ in range(400)]
    sizes = [len(f) for f in frames]
    assert 150 < sizes.count(64) < 250 and sizes.count(64) + sizes.count(1514) == 400
    times = generate(100e9, frames)
    ends_ps = [0]
    for size in sizes:
        ends_ps.append(ends_ps[-1] + (size + 24) * 80)  # 8 bits / 100 Gb/s = 80 ps per byte
    assert times == [-(-t // 1000) for t in ends_ps[:-1]]
    assert [packet_id(f) for f in frames] == list(range(400))
    again = FrameStream(HOSTS["h1"], HOSTS["h2"], mix=((64, 1.0), (1514, 1.0)), seed=4)
    assert [len(again.frame(again.next_size())) for _ in range(400)] == sizes


def test_truncated_gaps_keep_every_loss_and_cut_only_long_quiet_runs() -> None:
    full = [IidLoss(0.01).lost(rng) for rng in [random.Random(3)] for _ in range(200_000)]
    cut_model = TruncatedGaps(IidLoss(0.01), max_gap=150)
    rng = random.Random(3)
    cut = [cut_model.lost(rng) for _ in range(200_000 - 60_000)]

    def gaps(seq: list[bool]) -> list[int]:
        out, run = [], 0
        for lost in seq:
            if lost:
                out.append(run)
                run = 0
            else:
                run += 1
        return out

    full_gaps, cut_gaps = gaps(full), gaps(cut)
    assert cut_gaps == [min(g, 150) for g in full_gaps[:len(cut_gaps)]]
    cut_out = sum(g - 150 for g in full_gaps[:len(cut_gaps)] if g > 150)
    assert cut_model.skipped == cut_out > 0 and sum(cut_model.cuts) == cut_out


def test_bursty_gilbert_elliott_has_the_asked_rate_and_burst_length() -> None:
    model = GilbertElliott.bursty(0.02, mean_burst=3.0)
    rng = random.Random(8)
    losses = [model.lost(rng) for _ in range(300_000)]
    starts = sum(1 for a, b in zip(losses, losses[1:], strict=False) if b and not a)
    assert sum(losses) / len(losses) == pytest.approx(0.02, rel=0.1)
    assert sum(losses) / starts == pytest.approx(3.0, rel=0.1)
    with pytest.raises(ValueError):
        GilbertElliott.bursty(0.02, mean_burst=0.5)


class _Job:
    def __init__(self, length: int) -> None:
        self.port, self.priority, self.length = 2, 0, length


def test_queue_byte_cap_drops_what_does_not_fit() -> None:
    clock = VirtualClock()
    sent: list[int] = []
    tm = TrafficManager(clock, 1, lambda job, *_: sent.append(job.length) or job.length)
    tm.set_port_rate(1e9, 2, burst_bytes=0)
    tm.set_queue_bytes(2_500, port=2)
    for _ in range(5):
        tm.enqueue(_Job(1_000))  # the first leaves at once, two wait, two do not fit
    clock.run_until()
    assert sent == [1_000] * 3 and tm.drops["queue_full"] == 2
    tm.set_queue_bytes(0, port=2)
    for _ in range(5):
        tm.enqueue(_Job(1_000))
    clock.run_until()
    assert len(sent) == 8 and tm.drops["queue_full"] == 2  # only the 64-packet depth now


def test_a_recirculated_packet_is_charged_to_its_port_and_counted() -> None:
    data = bytes(300)

    class Loops:
        def egress(self, *_args: object) -> EgressResult:
            return EgressResult(None, [], IngressJob(data, 4, {}), False)

    switch = Switch(clock=VirtualClock(), pass_latency_ns=10)
    switch.pipeline = Loops()
    assert switch._egress_pass(_Job(300), 0, 0, 0, 0, 0) == len(data)
    assert switch.recirculations == 1
