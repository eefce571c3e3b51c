"""Virtual-time network: two switches over a lossy 100G link, exact arrival times, determinism
for a seed, the loss models and rate-driven sources."""

from __future__ import annotations

import random
import struct
from pathlib import Path

import pytest
from testpaths import TESTS

from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.frontend.compiler import compile_file
from lgkit.sw.switch.loss import GilbertElliott, IidLoss, LossModel
from lgkit.sw.switch.vnet import VirtualNetwork

PROGRAM = (TESTS / Path(__file__).name).with_name("test_tm_program.p4")
FRAME_BYTES = 100


@pytest.fixture(scope="module")
def compiled():
    return compile_file(str(PROGRAM))


def frame(seq: int) -> bytes:
    """Control header asking each switch for port 2 (see test_tm_program.p4)."""
    head = struct.pack(">BBBB", 2, 0, 0, seq)
    return head + bytes(FRAME_BYTES - len(head))


def two_switches(compiled, seed: int, loss, pass_latency_ns: int = 300):
    """h1 -1- s1 -2==1- s2 -2- h2; 100G everywhere; 100 ns host links, 1 us between switches."""
    net = VirtualNetwork(seed=seed)
    s1 = net.add_switch("s1", Pipeline.load(compiled), pass_latency_ns=pass_latency_ns)
    s2 = net.add_switch("s2", Pipeline.load(compiled), pass_latency_ns=pass_latency_ns)
    h1, h2 = net.add_host("h1"), net.add_host("h2")
    net.link(h1, s1, port=1, rate_bps=100e9, delay_ns=100)
    core = net.link(s1, s2, port_a=2, port_b=1, rate_bps=100e9, delay_ns=1000, loss=loss)
    net.link(s2, h2, port=2, rate_bps=100e9, delay_ns=100)
    return net, h1, h2, core


def test_two_switches_over_lossy_100g_link_exact_arrival_times(compiled):
    net, h1, h2, core = two_switches(compiled, seed=3, loss=IidLoss(0.3))
    sent_at = {seq: seq * 1000 for seq in range(200)}
    for seq, t in sent_at.items():
        h1.send(frame(seq), at_ns=t)
    net.run()
    # Per hop: (100 + 24) B at 100 Gb/s = 9.92 ns on the wire, rounded up to 10 ns at the far
    # end, plus the link delay; each switch adds an ingress and an egress pass of 300 ns.
    hop_host, hop_core = 10 + 100, 10 + 1000
    expected_delay = hop_host + 600 + hop_core + 600 + hop_host
    received = {d[3]: t for t, d in h2.received}
    assert core.forward.lost + len(received) == 200
    assert 35 <= core.forward.lost <= 85
    assert all(t - sent_at[seq] == expected_delay for seq, t in received.items())
    assert [d[3] for _, d in h2.received] == sorted(received)


def test_back_to_back_frames_keep_the_exact_link_rate(compiled):
    net, h1, h2, _ = two_switches(compiled, seed=1, loss=None, pass_latency_ns=0)
    for seq in range(50):
        h1.send(frame(seq), at_ns=0)
    net.run()
    times = [t for t, _ in h2.received]
    assert len(times) == 50
    # 9.92 ns per frame: in 49 gaps the spacing sums to exactly 49 * 9.92 ns (+ rounding < 1).
    assert 486 <= times[-1] - times[0] <= 487
    assert set(b - a for a, b in zip(times, times[1:], strict=False)) <= {9, 10, 11}


def run_once(compiled, seed: int) -> list[tuple[int, bytes]]:
    net, h1, h2, _ = two_switches(compiled, seed=seed,
                                  loss=GilbertElliott(p_gb=0.05, p_bg=0.3))
    h1.send_at_rate((frame(k % 256) for k in range(300)), pps=5e6)
    net.run()
    return h2.received


def test_same_seed_same_run_other_seed_other_losses(compiled):
    first, again, other = run_once(compiled, 11), run_once(compiled, 11), run_once(compiled, 12)
    assert first == again
    assert 0 < len(first) < 300
    assert [t for t, _ in first] != [t for t, _ in other]


def test_send_at_rate_spacing(compiled):
    net, h1, h2, _ = two_switches(compiled, seed=1, loss=None)
    h1.send_at_rate([frame(k) for k in range(4)], pps=1e6, start_ns=500)
    net.run()
    times = [t for t, _ in h2.received]
    assert [b - a for a, b in zip(times, times[1:], strict=False)] == [1000, 1000, 1000]


def test_gilbert_elliott_is_bursty_with_the_stationary_loss_rate():
    model = GilbertElliott(p_gb=0.01, p_bg=0.25)
    rng = random.Random(5)
    losses = [model.lost(rng) for _ in range(200_000)]
    rate = sum(losses) / len(losses)
    assert rate == pytest.approx(0.01 / 0.26, rel=0.1)
    bursts = sum(1 for a, b in zip(losses, losses[1:], strict=False) if b and not a)
    assert sum(losses) / bursts == pytest.approx(1 / 0.25, rel=0.1)


def test_iid_loss_rate():
    model = IidLoss(0.02)
    rng = random.Random(9)
    assert sum(model.lost(rng) for _ in range(100_000)) / 1e5 == pytest.approx(0.02, rel=0.1)


@pytest.mark.parametrize("model", [LossModel(0.03), LossModel(0.03, "ge", bad_loss=0.5,
                                                                  mean_burst=4.0)])
def test_the_injectors_loss_model_frame_by_frame_has_its_mean_rate(model):
    frames = model.frames()
    rng = random.Random(11)
    assert sum(frames.lost(rng) for _ in range(200_000)) / 2e5 == pytest.approx(0.03, rel=0.1)


def test_bad_network_definitions_are_refused(compiled):
    net = VirtualNetwork()
    s1 = net.add_switch("s1", Pipeline.load(compiled))
    h1 = net.add_host("h1")
    with pytest.raises(ValueError, match="already exists"):
        net.add_host("s1")
    with pytest.raises(ValueError, match="port"):
        net.link(h1, s1)
    with pytest.raises(ValueError):
        IidLoss(1.5)


def test_periodic_sampling_of_queue_depth(compiled):
    net, h1, _, _ = two_switches(compiled, seed=1, loss=None, pass_latency_ns=0)
    s1 = net.switches["s1"]
    s1.tm.set_port_rate(1e9, 2, burst_bytes=0)  # 1 Gb/s out of s1: 992 ns per frame
    for seq in range(20):
        h1.send(frame(seq), at_ns=0)
    samples: list[tuple[int, int]] = []
    net.every(1000, lambda t: samples.append((t, s1.tm.queue_depths(2)[0])), until_ns=30_000)
    net.run()
    assert samples[0] == (0, 0)
    assert samples[-1][0] == 30_000
    assert max(depth for _, depth in samples) >= 15
    assert samples[-1][1] == 0
