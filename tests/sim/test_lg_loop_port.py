"""LinkGuardian's loop port: Tx-buffer copies wait in a rate-limited queue instead of spinning.

Virtual time, so the counts are exact: with a slow ACK path (a 1 ms link), an unlimited loop
port re-checks every copy once per pipeline pass, while a queue rate on the loop port bounds the
checks per copy near rate / packet rate. Recovery stays complete and in order either way, and
loss notifications never wait in the loop port's queue.
"""

from __future__ import annotations

import pytest

from lgkit.control.linkguardian import DEFAULT_LAYOUT, LGParams
from lgkit.sim.scenario import LGNet, ScenarioConfig

RATE_BPS = 100e6
LINK_PPS = RATE_BPS / (1514 * 8)
PACKETS = 800
LOOP_SHARE = 2.0


def make(loop_pps: float, loss: float = 1e-2, seed: int = 5) -> LGNet:
    """A 100 Mb/s protected link with a 1 ms delay (so ACKs take 2 ms)."""
    params = LGParams(actual_loss=loss, target_loss=1e-8, ack_timeout_us=50_000, pause_bytes=0)
    return LGNet(ScenarioConfig(params=params, rate_bps=RATE_BPS, delay_ns=1_000_000,
                                pass_latency_ns=20_000, loss=loss, loop_pps=loop_pps, seed=seed))


def send(net: LGNet) -> LGNet:
    """PACKETS frames at 90% of the link rate, and time for every recovery."""
    pps = 0.9 * LINK_PPS
    net.send_stream(PACKETS, pps, size=1400)
    net.run(int(PACKETS / pps * 1e9) + 100_000_000)
    return net


def run(loop_pps: float) -> LGNet:
    return send(make(loop_pps))


@pytest.fixture(scope="module")
def limited() -> LGNet:
    return run(LOOP_SHARE * LINK_PPS)


@pytest.fixture(scope="module")
def unlimited() -> LGNet:
    return run(0.0)


def test_rate_limited_loop_recovers_every_loss_in_order(limited: LGNet) -> None:
    assert limited.counter("s1", "lg_cnt_retx") > 0  # losses happened and were repaired
    assert limited.delivered() == list(range(PACKETS))
    assert limited.counter("s2", "lg_cnt_timeouts") == 0
    assert limited.register("s1", "lg_tx_buf_pkts") == 0
    assert limited.switches["s1"].drops["queue_full"] == 0


@pytest.mark.slow
def test_queue_rate_bounds_the_checks_per_copy(limited: LGNet, unlimited: LGNet) -> None:
    assert unlimited.delivered() == list(range(PACKETS))
    checks_limited = limited.switches["s1"].passes["recirc"] / PACKETS
    checks_unlimited = unlimited.switches["s1"].passes["recirc"] / PACKETS
    # At most the first pass (recirculation port) plus about rate / packet rate loops.
    assert checks_limited <= 1 + LOOP_SHARE / 0.9 + 0.5
    assert checks_unlimited > 5 * checks_limited


@pytest.mark.slow
def test_copies_loop_on_the_loop_port_and_notifications_take_the_recirculation_port() -> None:
    net = make(LOOP_SHARE * LINK_PPS)
    seen: dict[str, set[int]] = {"s1": set(), "s2": set()}
    for name, switch in net.switches.items():
        enqueue = switch.tm.enqueue

        def spy(job, enqueue=enqueue, name=name) -> None:
            if job.port in (DEFAULT_LAYOUT.recirc_port, DEFAULT_LAYOUT.loop_port):
                seen[name].add(job.port)
            enqueue(job)

        switch.tm.enqueue = spy
    send(net)
    assert net.delivered() == list(range(PACKETS))
    # The sender's copies use both: the clone's first pass, then the loops.
    assert seen["s1"] == {DEFAULT_LAYOUT.recirc_port, DEFAULT_LAYOUT.loop_port}
    # The receiver's notifications (and its reordering buffer) stay off the loop port.
    assert net.counter("s2", "lg_cnt_loss_events") > 0
    assert seen["s2"] == {DEFAULT_LAYOUT.recirc_port}
