"""Fuzzing LinkGuardian's program with frames on the protected link, in virtual time
(hypothesis): a protected stream (no losses: with the short ackNoTimeout that lets a forged
gap drain quickly, retransmissions would come too late; loss recovery is tested elsewhere),
plus a few frames drawn by hypothesis put on the link in either direction at random moments:
LG data frames with any header bits and sequence numbers (near the stream's and far from it),
ACKs, loss notifications, pause/resume, truncated LG headers and plain garbage. Whatever
arrives, the run ends without an exception and with a bounded amount of work, the Tx and Rx
buffers drain, and the measurement counters agree with what crossed the link."""

from __future__ import annotations

import struct

import pytest
from fuzz_inputs import EXAMPLES, FUZZ_SETTINGS
from hypothesis import event, given, settings
from hypothesis import strategies as st

from lgkit.control.linkguardian import LGParams
from lgkit.sim.scenario import LINK_PORT, LGNet, ScenarioConfig

STREAM = 40
PPS = 2e6
ACK_TIMEOUT_US = 1
WINDOW = 4096  # p4/include/defines.p4 LG_SEQ_WINDOW
QUIET_NS = WINDOW * ACK_TIMEOUT_US * 1000 + 2_000_000
"""After the stream: time for the worst accepted gap (a forged seq just inside the window) to
be skipped by ackNoTimeouts, one sequence number each, and for the buffers to drain."""
RUN_NS = int(STREAM / PPS * 1e9) + QUIET_NS
MAX_EVENTS = 300_000  # the worst accepted gap costs ~100k; a wedged receiver takes millions
LG_SETTINGS = settings(FUZZ_SETTINGS, max_examples=max(10, EXAMPLES // 3))


def lg_data(seq: int, more: int, retx: int, dummy: int, blocking: int) -> bytes:
    first = (more << 5) | (((seq >> 16) & 1) << 4) | (retx << 3) | (dummy << 2) | (blocking << 1)
    return bytes([first]) + struct.pack("!H", seq & 0xFFFF)


def lg_ack(kind: int, ack: int, piggybacked: int, xoff: int) -> bytes:
    first = (kind << 6) | (piggybacked << 5) | (((ack >> 16) & 1) << 4) | (xoff << 3)
    return bytes([first]) + struct.pack("!H", ack & 0xFFFF)


@st.composite
def fuzz_frames(draw: st.DrawFn, net: LGNet) -> bytes:
    """One frame: an LG frame with drawn fields around a plain frame, or raw bytes."""
    plain = net.frame("h1", "h2", draw(st.integers(1000, 1100)), size=draw(st.integers(60, 300)))
    eth, rest = plain[:12], plain[12:]
    seq = draw(st.one_of(st.integers(0, 60), st.integers(0, 0x1FFFF)))  # near the stream, or any
    kind = draw(st.sampled_from(["data", "data+ack", "ack", "notify", "ctrl", "cut", "raw"]))
    event(kind)
    bit = st.integers(0, 1)
    if kind == "raw":
        return draw(st.binary(min_size=0, max_size=200))
    if kind == "cut":  # an LG EtherType with a truncated header
        return eth + b"\xab\xcd" + draw(st.binary(max_size=4))
    if kind in ("data", "data+ack"):
        more = int(kind == "data+ack")
        header = lg_data(seq, more, draw(bit), draw(bit), draw(bit))
        if more:
            header += lg_ack(draw(st.integers(1, 2)), draw(st.integers(0, 0x1FFFF)), draw(bit),
                             draw(bit))
        return eth + b"\xab\xcd" + header + rest
    if kind in ("ack", "notify"):
        header = lg_ack(1 if kind == "ack" else 2, seq, 0, draw(bit))
        if kind == "notify":
            header += bytes([draw(st.integers(0, 255))]) + struct.pack(
                "!H", draw(st.integers(0, 0xFFFF)))
        return eth + b"\xab\xcd" + header
    return eth + b"\xab\xcd" + bytes([0xC0 | (draw(bit) << 5), draw(st.integers(0, 255)),
                                      draw(st.integers(0, 255))])  # pause / resume


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[LGNet, list[tuple[int, str, bytes]]]:
    mode = draw(st.sampled_from(["lg", "lg_nb"]))
    net = LGNet(ScenarioConfig(params=LGParams(mode=mode, copies=1,
                                               ack_timeout_us=ACK_TIMEOUT_US)))
    injected = []
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, int(STREAM / PPS * 1e9) + 50_000))
        direction = draw(st.sampled_from(["forward", "backward"]))
        injected.append((at, direction, draw(fuzz_frames(net))))
    return net, injected


@pytest.mark.slow
@pytest.mark.timeout(900)
@LG_SETTINGS
@given(scenarios())
def test_fuzzed_frames_on_the_protected_link(case) -> None:
    net, injected = case
    for at, direction, frame in injected:
        link_direction = net.link.forward if direction == "forward" else net.link.backward
        net.net.clock.call_at(at, link_direction.deliver, frame)
    net.send_stream(STREAM, pps=PPS)
    net.run(RUN_NS)  # no exception escapes a pass

    assert net.net.clock.events_run < MAX_EVENTS  # no loop that burns the CPU
    for switch, role in (("s1", "tx"), ("s2", "rx")):  # the buffers drain
        assert net.register(switch, f"lg_{role}_buf_pkts") == 0
        assert net.register(switch, f"lg_{role}_buf_bytes") == 0
    # the counters agree with the link and the hosts
    arrived = sum(1 for r in net.forward_log if not r.dropped)
    injected_forward = sum(1 for _, d, _ in injected if d == "forward")
    assert net.counter("s2", "lg_cnt_c", LINK_PORT) == arrived
    assert net.counter("s1", "lg_cnt_b", LINK_PORT) == len(net.forward_log) - injected_forward
    assert net.counter("s1", "lg_cnt_a", LINK_PORT) >= STREAM  # (+ injected ones s1 routed)
    assert net.counter("s2", "lg_cnt_d", LINK_PORT) >= len(net.hosts["h2"].received)
    delivered = net.delivered()
    assert set(delivered) <= set(range(STREAM)) | set(range(1000, 1101))  # nothing made up
    legit = [i for i in delivered if i < STREAM]
    if all(not frame[12:14] == b"\xab\xcd" for _, _, frame in injected):
        assert sorted(legit) == list(range(STREAM))  # only non-LG junk: LG unaffected
