"""Untimed runs (STF) of either architecture: v1model's driver (run_untimed, which both use)
with PFC pause of the egress queues (exec/pfc.py) and, for TNA, the packet generator's packets
at their virtual times, between and during packets."""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, cast

from lgkit.sw.exec.arch.tna.pktgen import PacketGenerator
from lgkit.sw.exec.arch.v1model.passes import run_untimed
from lgkit.sw.exec.pfc import UntimedPause

if TYPE_CHECKING:
    from lgkit.sw.exec.pipeline import Pipeline

Outputs = list[tuple[int, bytes]]


class Session:
    """What an untimed run keeps between packets: the pauses and the packet generator (which
    only TNA's commands configure)."""

    def __init__(self) -> None:
        self.pause = UntimedPause()
        self.pktgen = PacketGenerator()


def session(pl: Pipeline) -> Session:
    """The pipeline's session, kept beside the architecture's slots (made on first use)."""
    s = getattr(pl.slots, "session", None)
    if s is None:
        s = Session()
        setattr(pl.slots, "session", s)  # noqa: B010 (slots are the architecture's object)
    return cast(Session, s)


def generator(pl: Pipeline) -> PacketGenerator:
    """The packet generator of a TNA pipeline (a switch runs it on its clock: pktgen.Running)."""
    if "pktgen_timer" not in pl.arch.commands:
        raise ValueError(f"{pl.arch.name} programs have no packet generator")
    return session(pl).pktgen


def receive(pl: Pipeline, port: int, data: bytes) -> Outputs:
    """A frame arriving on `port` now, after what was due before it (a PFC frame is the MAC's:
    it pauses or resumes the port's queues and goes no further)."""
    s, clock = session(pl), pl.untimed_clock
    out = run_due(pl, clock.now_ns)
    if s.pause.receive(port, data, clock.now_ns):
        return out + run_due(pl, clock.now_ns)
    return out + run_untimed(pl, port, data, (), s.pause)


def run_due(pl: Pipeline, end_ns: int) -> Outputs:
    """The generator's packets before `end_ns` and the pauses ending by then, in time order
    (a pause end before a packet of the same time); the clock ends at `end_ns` or later."""
    s, clock = session(pl), pl.untimed_clock
    packets = deque(s.pktgen.due(end_ns))
    out: Outputs = []
    while True:
        resume = s.pause.next_end_ns()
        if resume is not None and resume <= end_ns and (not packets or resume <= packets[0][0]):
            clock.now_ns = max(clock.now_ns, resume)
            out += run_untimed(pl, 0, None, s.pause.released(clock.now_ns), s.pause)
        elif packets:
            t, port, data = packets.popleft()
            clock.now_ns = max(clock.now_ns, t)
            if not s.pause.receive(port, data, clock.now_ns):
                out += run_untimed(pl, port, data, (), s.pause)
        else:
            clock.now_ns = max(clock.now_ns, end_ns)
            return out


def command(pl: Pipeline, keyword: str, words: list[str]) -> Outputs:
    """A packet-generator command (pktgen.USAGE) at the run's time; what it sends at once."""
    clock = pl.untimed_clock
    gen = generator(pl)
    out = run_due(pl, clock.now_ns)
    for _, port, data in gen.command(keyword, words, clock.now_ns):
        out += run_untimed(pl, port, data, (), session(pl).pause)
    return out

