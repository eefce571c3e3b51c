"""Vertigo's ordering on receive (paper §3.3, Fig. 4): packets of a flow go up to TCP in the
order they were sent, read from the remaining flow size in their flowinfo; a packet that comes
early waits in a reorder buffer until the missing ones arrive or a timeout tau passes.

Pure logic: `arrive()` and `expire()` say which packets to release, in order; the caller holds
the packets (the host agent holds their NFQUEUE verdicts). Times are in microseconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lgkit.schemes.flowinfo import FlowInfo

KEEP_DONE = 4096
"Finished flows remembered."
FlowKey = tuple[bytes, int, bytes, int, int]
"(source address, source port, destination address, destination port, flow id)"


@dataclass
class Waiting:
    """A buffered packet."""

    handle: int
    length: int
    arrived_us: float


@dataclass
class FlowState:
    """One flow at the receiver."""

    expected: int | None
    "Original RFS of the next packet in order (None: the first packet has not come yet)."
    early: dict[int, list[Waiting]] = field(default_factory=dict)
    "Buffered packets by original RFS."

    def deadline(self, tau_us: float) -> float | None:
        """When the oldest buffered packet times out."""
        if not self.early:
            return None
        return min(w.arrived_us for ws in self.early.values() for w in ws) + tau_us


@dataclass
class OrdererStats:
    """What the ordering component saw."""

    in_order: int = 0
    early: int = 0
    "Packets that arrived before one sent ahead of them (buffered)."
    late: int = 0
    "Packets behind what was already released (retransmissions, duplicates): sent up at once."
    released_by_timeout: int = 0
    timeouts: int = 0
    passed: int = 0
    "Packets without flowinfo, or marked by age, sent up at once."
    most_buffered: int = 0
    deflected: int = 0
    "Packets that switches deflected at least once (from the flowinfo)."


class Orderer:
    """Reorder buffer over all flows of a host."""

    def __init__(self, tau_us: float) -> None:
        self.tau_us = tau_us
        self.flows: dict[FlowKey, FlowState] = {}
        self.done: dict[FlowKey, None] = {}
        "Flows delivered whole, oldest first (a later packet of one is a retransmission)."
        self.waiting: set[FlowKey] = set()
        """Flows with buffered packets: the only ones a timeout can concern (the agent asks for
        the next deadline at every wake-up; walking every tracked flow cost ~0.5 ms per 1000)."""
        self.buffered = 0
        self.stats = OrdererStats()

    def arrive(self, handle: int, key: FlowKey | None, info: FlowInfo | None, length: int,
               now_us: float) -> list[int]:
        """A packet arrived (`length`: its TCP payload bytes); returns the handles to release
        now, in order (possibly none, possibly earlier packets it unblocked)."""
        if key is None or info is None or info.aged or length == 0:
            self.stats.passed += 1
            return [handle]
        if info.deflections:
            self.stats.deflected += 1
        rfs = info.original_rfs
        state = self.flows.get(key)
        fresh_first = info.first and info.retcnt == 0
        if state is None and key in self.done and not fresh_first:
            self.stats.late += 1  # a flow already delivered whole: a retransmission
            return [handle]
        if state is None or (fresh_first and state.expected is not None
                             and rfs > state.expected and not state.early):
            state = self.flows[key] = FlowState(expected=None)  # a new flow on this id
            self.done.pop(key, None)
        if state.expected is None and info.first:
            state.expected = rfs
        if state.expected is not None and rfs > state.expected:
            self.stats.late += 1
            return [handle]
        if state.expected is None or rfs < state.expected:
            self._buffer(key, state, rfs, Waiting(handle, length, now_us))
            self.stats.early += 1
            return []
        self.stats.in_order += 1
        state.expected = rfs - length
        released = [handle] + self._drain(state)
        self._forget_if_done(key, state)
        return released

    def _buffer(self, key: FlowKey, state: FlowState, rfs: int, waiting: Waiting) -> None:
        state.early.setdefault(rfs, []).append(waiting)
        self.waiting.add(key)
        self.buffered += 1
        self.stats.most_buffered = max(self.stats.most_buffered, self.buffered)

    def _drain(self, state: FlowState) -> list[int]:
        """Release the buffered packets that are now in order."""
        released = []
        while state.expected is not None and state.expected in state.early:
            waiting = state.early.pop(state.expected)
            self.buffered -= len(waiting)
            released += [w.handle for w in waiting]
            state.expected -= waiting[0].length
        return released

    def _forget_if_done(self, key: FlowKey, state: FlowState) -> None:
        if not state.early:
            self.waiting.discard(key)
        if state.expected is not None and state.expected <= 0 and not state.early:
            del self.flows[key]
            self.done[key] = None
            if len(self.done) > KEEP_DONE:
                del self.done[next(iter(self.done))]

    def next_deadline(self) -> float | None:
        """The earliest time `expire` has something to do."""
        deadlines = [d for k in self.waiting
                     if (d := self.flows[k].deadline(self.tau_us)) is not None]
        return min(deadlines, default=None)

    def expire(self, now_us: float) -> list[int]:
        """Flows whose oldest buffered packet waited tau: release up to the next gap (the
        missing packet is given up on; TCP will see the hole)."""
        released: list[int] = []
        for key in list(self.waiting):
            state = self.flows[key]
            deadline = state.deadline(self.tau_us)
            if deadline is None or deadline > now_us:
                continue
            self.stats.timeouts += 1
            state.expected = max(state.early)
            freed = self._drain(state)
            self.stats.released_by_timeout += len(freed)
            released += freed
            self._forget_if_done(key, state)
        return released

    def flush(self) -> list[int]:
        """Release everything still buffered (at shutdown)."""
        released = [w.handle for s in self.flows.values() for ws in s.early.values() for w in ws]
        self.flows.clear()
        self.waiting.clear()
        self.buffered = 0
        return released
