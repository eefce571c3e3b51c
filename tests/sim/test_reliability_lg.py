"""LinkGuardian under a bogus frame, in virtual time: a data frame whose sequence number lies
outside the receiver's window (p4/include/defines.p4 LG_SEQ_WINDOW) is dropped and counted,
and it neither wedges the receiver nor costs the network any work; a forged pause expires
(tx_pause_timeout_us) instead of holding the sender forever."""

from __future__ import annotations

import pytest

from lgkit.control.linkguardian import LGParams
from lgkit.sim.scenario import LGNet, ScenarioConfig

BOGUS_ID = 999_999
LOST = {150, 160, 170}  # real losses in the second stream, to be recovered as usual


def bogus_frame(net: LGNet, seq: int, blocking: bool) -> bytes:
    """A data frame with LG header `seq` (17 bits) around a plain test frame."""
    plain = net.frame("h1", "h2", BOGUS_ID)
    first = (((seq >> 16) & 1) << 4) | (int(blocking) << 1)
    return plain[:12] + b"\xab\xcd" + bytes([first]) + (seq & 0xFFFF).to_bytes(2, "big") + \
        plain[12:]


def run(mode: str, bogus_seq: int | None) -> LGNet:
    """Two streams of 100 frames 2 ms apart, three losses in the second; optionally one bogus
    frame on the protected link 20 us into the first."""
    net = LGNet(ScenarioConfig(params=LGParams(mode=mode, copies=1, ack_timeout_us=20)))
    net.forward_rules.originals = set(LOST)
    net.send_stream(100, pps=2e6)
    net.send_stream(100, pps=2e6, start_ns=2_000_000, first_id=100)
    if bogus_seq is not None:
        frame = bogus_frame(net, bogus_seq, blocking=mode == "lg")
        net.net.clock.call_at(20_000, net.link.forward.deliver, frame)
    net.run(6_000_000)
    return net


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["lg", "lg_nb"])
@pytest.mark.parametrize("bogus_seq", [20_000, 4_200, 70_000, 0x1FFFF - 5000])
def test_a_frame_outside_the_window_is_dropped_and_counted(mode: str, bogus_seq: int) -> None:
    clean, net = run(mode, None), run(mode, bogus_seq)
    delivered = net.delivered()
    assert BOGUS_ID not in delivered
    assert sorted(delivered) == list(range(200))  # every frame once, the losses recovered
    if mode == "lg":
        assert delivered == list(range(200))
    assert net.counter("s2", "lg_cnt_out_of_window") == 1
    assert net.counter("s2", "lg_cnt_dups") == clean.counter("s2", "lg_cnt_dups") == 0
    assert net.counter("s2", "lg_cnt_timeouts") == 0
    assert net.register("s2", "lg_rx_lost") == len(LOST)
    assert net.register("s2", "lg_rx_buf_pkts") == 0 and net.register("s1", "lg_tx_buf_pkts") == 0
    # the bogus frame cost nothing: the same events as the clean run (it was one arrival)
    assert net.net.clock.events_run - clean.net.clock.events_run <= 2


@pytest.mark.parametrize("mode", ["lg", "lg_nb"])
def test_frames_inside_the_window_are_processed_as_before(mode: str) -> None:
    """A seq just inside the window ahead (a burst of losses) still counts as losses."""
    net = run(mode, 4_000)
    assert net.counter("s2", "lg_cnt_out_of_window") == 0
    assert net.register("s2", "lg_rx_lost") > 3000  # taken as a (huge) gap, as the protocol says


PAUSE_TIMEOUT_US = 80
FORGED_AT_NS = 366  # before the first data frame reaches s1's egress


def forged_pause_run(pause_timeout_us: int | None) -> LGNet:
    """An ACK with xoff=1 that the receiver never sent, then 40 frames: the receiver is not
    paused and, while every packet is held, it has nothing to answer with xoff=0."""
    params = LGParams(mode="lg", copies=1, ack_timeout_us=20, pause_timeout_us=pause_timeout_us)
    net = LGNet(ScenarioConfig(params=params))
    plain = net.frame("h1", "h2", BOGUS_ID)
    forged_pause = plain[:12] + b"\xab\xcd" + bytes([0x48, 0x01, 0x8F])  # ACK 399, xoff=1
    net.net.clock.call_at(FORGED_AT_NS, net.link.backward.deliver, forged_pause)
    net.send_stream(40, pps=2e6)
    net.run(500_000)  # 40 frames take 20 us; held, they loop in the recirculation port
    return net


def test_a_forged_pause_expires_and_the_held_packets_leave_in_order() -> None:
    net = forged_pause_run(PAUSE_TIMEOUT_US)
    assert net.delivered() == list(range(40))
    assert net.counter("s1", "lg_cnt_pause_expiries") == 1
    first_ns = net.hosts["h2"].received[0][0]
    assert first_ns >= FORGED_AT_NS + PAUSE_TIMEOUT_US * 1000  # held until the pause expired
    assert net.register("s1", "lg_tx_paused") == 0


def test_the_default_pause_timeout_is_a_few_ack_timeouts() -> None:
    assert LGParams(ack_timeout_us=20).pause_timeout == 80
    assert LGParams(ack_timeout_us=0).pause_timeout == 1000  # no ackNoTimeout: 1 ms
    with pytest.raises(ValueError, match="pause_timeout"):
        LGParams(pause_timeout_us=-1)
    net = forged_pause_run(None)
    assert net.delivered() == list(range(40))


@pytest.mark.slow
def test_a_pause_without_timeout_holds_until_a_resume() -> None:
    net = forged_pause_run(0)  # 0 = never expires: the open finding's behaviour, by choice
    assert net.delivered() == []
    assert net.counter("s1", "lg_cnt_pause_expiries") == 0
