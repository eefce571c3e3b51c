"""Traffic manager modelled on BMv2 simple_switch: per (port, priority) queues, strict priority,
queue depth and packet rate, a port bit rate with a small burst, and drop counters."""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lgkit.sw.exec.pfc import pause_ns, pfc_quanta

from .clock import Clock

if TYPE_CHECKING:
    from ..exec.jobs import EgressJob

DEFAULT_QUEUE_DEPTH = 64
SERVE_BATCH = 64
PS_PER_S = 10**12
CLONE_INSTANCE_TYPES = (1, 2)
"""BMv2's instance_type of I2E and E2E clones (PKT_INSTANCE_TYPE_INGRESS_CLONE, _EGRESS_CLONE)."""

# transmit(job, now_us, enq_qdepth, deq_qdepth, enq_timestamp_us, deq_timedelta_us) -> wire
# bytes (0 = the egress pass dropped it); the port rate is charged for the bytes actually sent.
Transmit = Callable[["EgressJob", int, int, int, int, int], int]


def period_ns(pps: float) -> int:
    """The departure period of a queue served at `pps` packets/s (0: unlimited)."""
    return int(1e9 / pps) if pps else 0


def wire_start_ps(now_ns: int, tat_ps: int, ready_ns: int = 0, late_ns: int = 0) -> int:
    """When a frame sent at `now_ns` starts on a wire that is free from `tat_ps`: back to back
    with the previous frame if only the rounding of timers to whole ns separates them (so a
    backlogged port keeps its exact rate); else when it was due, max(`tat_ps`, `ready_ns`: when
    its queue let it go), if that is less than `late_ns` ago (a real-time timer that fired late
    because the event loop was busy or descheduled does not idle the wire); else now."""
    now_ps = now_ns * 1000
    if tat_ps > now_ps - 1000:
        return tat_ps
    due_ps = max(tat_ps, ready_ns * 1000)
    return due_ps if now_ps - due_ps < late_ns * 1000 else now_ps


class Queue:
    """One egress queue: FIFO of (job, enqueue time ns, depth at enqueue), depth and rate;
    optionally a capacity in bytes too (`depth_bytes`, 0 = none; `bytes` queued now), and its
    occupancy in buffer cells (`cells` now, `peak_cells` its watermark) when the TM counts
    cells; a `paused` queue is not served (priority flow control; a PFC pause ends at
    `paused_until`)."""

    __slots__ = ("items", "depth", "pps", "next_due_ns", "depth_bytes", "bytes", "cells",
                 "peak_cells", "paused", "paused_until")

    def __init__(self, depth: int, pps: float) -> None:
        self.items: deque[tuple[EgressJob, int, int]] = deque()
        self.depth = depth
        self.pps = pps
        self.next_due_ns = 0
        self.depth_bytes = 0
        self.bytes = 0
        self.cells = 0
        self.peak_cells = 0
        self.paused = False
        self.paused_until = 0


class Port:
    """The queues of one egress port and its bit-rate shaper (GCRA in picoseconds)."""

    __slots__ = ("queues", "rate_bps", "burst_bytes", "framing_bytes", "min_frame_bytes",
                 "tat_ps", "tau_ps", "wake_at", "busy", "queued")

    def __init__(self, queues: list[Queue]) -> None:
        self.queues = queues
        self.rate_bps = 0
        self.burst_bytes = 0
        self.framing_bytes = 0
        self.min_frame_bytes = 0
        self.tat_ps = 0
        self.tau_ps = 0
        self.wake_at: int | None = None
        self.busy = False
        self.queued = 0

    def set_rate(self, rate_bps: int, burst_bytes: int, framing_bytes: int) -> None:
        self.rate_bps = rate_bps
        self.burst_bytes = burst_bytes
        self.framing_bytes = framing_bytes
        self.tau_ps = burst_bytes * 8 * PS_PER_S // rate_bps if rate_bps else 0

    def wire_ps(self, nbytes: int) -> int:
        return ((max(nbytes, self.min_frame_bytes) + self.framing_bytes) * 8 * PS_PER_S
                // self.rate_bps)


class TrafficManager:
    """Egress queues between the ingress and egress passes of a switch.

    Every queue defaults to `DEFAULT_QUEUE_DEPTH` packets and no rate limit; a port has no bit
    rate limit until `set_port_rate`. Each dequeue calls `transmit`, which runs the egress pass.
    """

    def __init__(self, clock: Clock, priority_queues: int, transmit: Transmit,
                 drops: Counter[str] | None = None, late_tolerance_ns: int = 0) -> None:
        if not 1 <= priority_queues <= 8:
            raise ValueError("priority_queues must be in 1..8")
        self.clock = clock
        self.priority_queues = priority_queues
        self.transmit = transmit
        self.drops: Counter[str] = drops if drops is not None else Counter()
        self.queue_drops: Counter[tuple[int, int]] = Counter()
        """Of the `queue_full` drops, how many each (port, priority) queue took (a port's clone
        lane counts as the port)."""
        # How late a timer may fire and still have its departure counted at the due time, by a
        # queue's packet rate and by a port's bit rate (real time: the loop may be busy or
        # descheduled; virtual time: never late, so 0 = exact BMv2 rule).
        self.late_tolerance_ns = late_tolerance_ns
        self.ports: dict[int, Port] = {}
        self.clone_lanes: dict[int, Port] = {}
        """Ports whose clones have a serializer and queues of their own (`set_clone_lane`)."""
        self.cell_bytes = 0
        """Count queue occupancy in cells of this many bytes (0 = off; `count_cells`)."""
        self._default_depth: list[int] = [DEFAULT_QUEUE_DEPTH] * priority_queues
        self._default_pps: list[float] = [0.0] * priority_queues

    # ---- configuration -------------------------------------------------------------------

    def port(self, port: int) -> Port:
        state = self.ports.get(port)
        if state is None:
            state = Port([Queue(d, r) for d, r in zip(self._default_depth, self._default_pps,
                                                      strict=True)])
            self.ports[port] = state
        return state

    def _selected(self, port: int | None, prio: int | None) -> list[Queue]:
        if prio is not None and not 0 <= prio < self.priority_queues:
            raise ValueError(f"priority {prio} out of range 0..{self.priority_queues - 1}")
        ports = self.ports.values() if port is None else [self.port(port)]
        return [q for p in ports for i, q in enumerate(p.queues) if prio is None or i == prio]

    def set_queue_depth(self, depth: int, port: int | None = None,
                        prio: int | None = None) -> None:
        """Queue capacity in packets; without a port, for every port (also ports seen later)."""
        if depth < 0:
            raise ValueError("queue depth must be >= 0")
        if port is None:
            for i in range(self.priority_queues):
                if prio is None or i == prio:
                    self._default_depth[i] = depth
        for q in self._selected(port, prio):
            q.depth = depth

    def set_queue_bytes(self, depth_bytes: int, port: int, prio: int | None = None) -> None:
        """Also cap a port's queue(s) in bytes of queued packets (0 = packets only), like a
        switch's per-queue buffer; a packet that would exceed it is dropped."""
        if depth_bytes < 0:
            raise ValueError("queue bytes must be >= 0")
        for q in self._selected(port, prio):
            q.depth_bytes = depth_bytes
            q.bytes = sum(job.length for job, _, _ in q.items)

    def set_queue_rate(self, pps: float, port: int | None = None,
                       prio: int | None = None) -> None:
        """Queue service rate in packets/s (0 = unlimited): departure = max(now, last + 1/pps)."""
        if pps < 0:
            raise ValueError("queue rate must be >= 0")
        if port is None:
            for i in range(self.priority_queues):
                if prio is None or i == prio:
                    self._default_pps[i] = pps
        for q in self._selected(port, prio):
            q.pps = pps
        for p in ([self.port(port)] if port is not None else list(self.ports.values())):
            self._serve(p)

    def set_port_rate(self, rate_bps: float, port: int, burst_bytes: int | None = None,
                      framing_bytes: int | None = None,
                      min_frame_bytes: int | None = None) -> None:
        """Limit a port to `rate_bps` (0 = unlimited) with a burst allowance.

        The default burst is 1 ms at the rate (at least two 1514 B frames); in real time a
        timer later than the burst covers is caught up within `late_tolerance_ns`.
        `framing_bytes` is added to every packet (24 for Ethernet preamble, FCS and
        inter-frame gap) after padding it to `min_frame_bytes`
        (the link's minimum frame, so that short frames cost the port what they cost the
        wire); None keeps the port's value (0 at first, the link's in a virtual network)."""
        rate = int(rate_bps)
        if rate < 0:
            raise ValueError("port rate must be >= 0")
        if burst_bytes is None:
            burst_bytes = max(2 * 1514, rate // 8000)
        state = self.port(port)
        if framing_bytes is None:
            framing_bytes = state.framing_bytes
        if min_frame_bytes is not None:
            state.min_frame_bytes = min_frame_bytes
        state.set_rate(rate, burst_bytes, framing_bytes)
        self._serve(state)

    def set_clone_lane(self, port: int, rate_bps: float, framing_bytes: int = 0,
                       depth: int = DEFAULT_QUEUE_DEPTH, depth_bytes: int = 0) -> None:
        """Serve the clones (I2E, E2E) queued to `port` by a serializer and queues of their own
        at `rate_bps`, like a switch whose mirror sessions deliver to an internal port while
        the other packets for `port` use a front-panel one (Tofino: mirrored copies to the
        internal recirculation port, loops through a port in loopback). The egress pass still
        sees `port`."""
        lane = Port([Queue(depth, 0.0) for _ in range(self.priority_queues)])
        for q in lane.queues:
            q.depth_bytes = depth_bytes
        lane.set_rate(int(rate_bps), 0, framing_bytes)
        self.clone_lanes[port] = lane

    def count_cells(self, cell_bytes: int) -> None:
        """Count every queue's occupancy in cells of `cell_bytes` (a packet takes
        ceil(length / cell_bytes)), with a watermark, like a switch's queue usage counters."""
        if cell_bytes <= 0:
            raise ValueError("cell size must be > 0")
        self.cell_bytes = cell_bytes

    def queue_cells(self, port: int, prio: int) -> tuple[int, int]:
        """(cells now, watermark) of a port's queue (the port's own, not its clone lane)."""
        q = self.port(port).queues[prio]
        return q.cells, q.peak_cells

    def set_paused(self, port: int, prio: int, paused: bool) -> None:
        """Pause or resume one queue of a port, as a MAC does on a PFC frame for its class:
        a paused queue keeps its packets and is skipped by the scheduler."""
        state = self.port(port)
        state.queues[prio].paused = paused
        state.queues[prio].paused_until = 0
        if not paused and not state.busy:
            self._serve(state)

    def receive_pfc(self, port: int, frame: bytes) -> bool:
        """The MAC's part of a frame received on `port`: an 802.1Qbb PFC frame pauses the port's
        queues of the priorities it names for their quanta x 512 bit times at the port's rate
        (10 Gb/s unshaped), or resumes them (quanta 0), and goes no further (True). A paused
        queue keeps its packets in order; a new frame replaces the time left."""
        quanta = pfc_quanta(frame)
        if quanta is None:
            return False
        state = self.port(port)
        now = self.clock.now_ns()
        for prio, q in quanta.items():
            if prio < self.priority_queues:
                queue = state.queues[prio]
                queue.paused_until = now + pause_ns(q, state.rate_bps)
                queue.paused = queue.paused_until > now
                if queue.paused:
                    self.clock.call_at(queue.paused_until, self._pause_end, state, queue,
                                       queue.paused_until)
        if not state.busy:
            self._serve(state)
        return True

    def _pause_end(self, state: Port, queue: Queue, until: int) -> None:
        if queue.paused_until == until and queue.paused:  # not replaced by a later frame
            queue.paused = False
            if not state.busy:
                self._serve(state)

    def reset_watermarks(self) -> None:
        """Start every queue's watermark again from its occupancy now."""
        for state in [*self.ports.values(), *self.clone_lanes.values()]:
            for q in state.queues:
                q.peak_cells = q.cells

    def wire_ns(self, port: int, nbytes: int, lane: bool = False) -> int:
        """Serialization time of `nbytes` at `port`'s rate (or its clone lane's), 0 if none."""
        state = self.clone_lanes.get(port) if lane else self.ports.get(port)
        if state is None or not state.rate_bps:
            return 0
        return -(-state.wire_ps(nbytes) // 1000)

    def idle(self) -> bool:
        """Whether nothing is queued or being sent and no queue is paused: then another
        traffic manager (the native port loop's) may take over from this one's settings."""
        return all(not (state.queued or state.busy) and not any(q.paused for q in state.queues)
                   for state in [*self.ports.values(), *self.clone_lanes.values()])

    def settings(self) -> tuple:
        """What the control plane set, comparable: (priority queues, cell bytes, late
        tolerance, default depths, default rates, per port or clone lane (lane, port, rate,
        burst, framing, minimum frame, per queue (depth, depth bytes, pps)))."""
        ports = tuple((lane, port, s.rate_bps, s.burst_bytes, s.framing_bytes,
                       s.min_frame_bytes, tuple((q.depth, q.depth_bytes, q.pps)
                                                for q in s.queues))
                      for lane, table in ((False, self.ports), (True, self.clone_lanes))
                      for port, s in sorted(table.items()))
        return (self.priority_queues, self.cell_bytes, self.late_tolerance_ns,
                tuple(self._default_depth), tuple(self._default_pps), ports)

    def queue_depths(self, port: int) -> list[int]:
        """Current occupancy (packets) of each priority queue of `port`."""
        return [len(q.items) for q in self.port(port).queues]

    def flush(self) -> None:
        """Discard every queued packet (a new pipeline invalidates their state)."""
        for state in [*self.ports.values(), *self.clone_lanes.values()]:
            for q in state.queues:
                q.items.clear()
                q.bytes = 0
                q.cells = 0
            state.queued = 0

    def describe(self) -> dict[str, Any]:
        return {
            "priority_queues": self.priority_queues,
            "ports": {
                port: {
                    "rate_bps": s.rate_bps, "burst_bytes": s.burst_bytes,
                    "queues": [{"depth": q.depth, "pps": q.pps, "occupancy": len(q.items)}
                               for q in s.queues],
                }
                for port, s in sorted(self.ports.items())
            },
        }

    # ---- data path -----------------------------------------------------------------------

    def enqueue(self, job: EgressJob) -> None:
        """Queue an egress job (has .port and .priority); drop it if the queue is full."""
        prio = job.priority
        if prio >= self.priority_queues:
            self.drops["bad_priority"] += 1
            return
        state = self.ports.get(job.port) or self.port(job.port)
        if self.clone_lanes and job.instance_type in CLONE_INSTANCE_TYPES:
            state = self.clone_lanes.get(job.port, state)
        q = state.queues[prio]
        if not (state.queued or state.busy or state.rate_bps or q.pps or q.paused):
            # The fast path: an idle, unshaped port sends the packet at once (no queueing).
            if q.depth == 0:
                self._full(job.port, prio)
                return
            now_us = self.clock.now_ns() // 1000
            state.busy = True
            try:
                self.transmit(job, now_us, 0, 0, now_us, 0)
            finally:
                state.busy = False
            if state.queued:
                self._serve(state)
            return
        items = q.items
        if len(items) >= q.depth:
            self._full(job.port, prio)
            return
        if q.depth_bytes:
            if q.bytes + job.length > q.depth_bytes:
                self._full(job.port, prio)
                return
            q.bytes += job.length
        if self.cell_bytes:
            q.cells += -(-job.length // self.cell_bytes)
            if q.cells > q.peak_cells:
                q.peak_cells = q.cells
        items.append((job, self.clock.now_ns(), len(items)))
        state.queued += 1
        if not state.busy:
            self._serve(state)

    def _full(self, port: int, prio: int) -> None:
        """Count a tail drop: a packet found its queue full."""
        self.drops["queue_full"] += 1
        self.queue_drops[(port, prio)] += 1

    def _serve(self, state: Port) -> None:
        """Send the packets of `state` that may leave now; arm a timer for the next one."""
        state.busy = True
        try:
            self._serve_batch(state)
        finally:
            state.busy = False

    def _serve_batch(self, state: Port) -> None:
        """Up to SERVE_BATCH packets per call, so that a packet that clones itself on every
        departure through an unlimited port cannot hold the event loop."""
        clock = self.clock
        queues = state.queues
        for _ in range(SERVE_BATCH):
            now = clock.now_ns()
            if state.rate_bps:
                eligible_ps = state.tat_ps - state.tau_ps
                if eligible_ps > now * 1000:
                    self._wake(state, -(-eligible_ps // 1000))
                    return
            chosen = None
            earliest = None
            for q in reversed(queues):
                if q.items and not q.paused:
                    if not q.pps or q.next_due_ns <= now:
                        chosen = q
                        break
                    if earliest is None or q.next_due_ns < earliest:
                        earliest = q.next_due_ns
            if chosen is None:
                if earliest is not None:
                    self._wake(state, earliest)
                return
            job, enq_ns, enq_depth = chosen.items.popleft()
            state.queued -= 1
            if chosen.depth_bytes:
                chosen.bytes -= job.length
            if self.cell_bytes:
                chosen.cells -= -(-job.length // self.cell_bytes)
            ready = enq_ns
            if chosen.pps:
                # when it should have left: when it was due, or enqueued if that was later
                ready = max(chosen.next_due_ns, enq_ns)
                start = ready if now - ready < self.late_tolerance_ns else now
                chosen.next_due_ns = start + period_ns(chosen.pps)
            sent = self.transmit(job, now // 1000, enq_depth, len(chosen.items), enq_ns // 1000,
                                 (now - enq_ns) // 1000)
            if state.rate_bps and sent:
                state.tat_ps = wire_start_ps(now, state.tat_ps, ready, self.late_tolerance_ns) \
                    + state.wire_ps(sent)
        self._wake(state, clock.now_ns())

    def _wake(self, state: Port, t_ns: int) -> None:
        if state.wake_at is not None and state.wake_at <= t_ns:
            return
        state.wake_at = t_ns
        self.clock.call_at(t_ns, self._on_wake, state, t_ns)

    def _on_wake(self, state: Port, t_ns: int) -> None:
        if state.wake_at != t_ns:
            return
        state.wake_at = None
        self._serve(state)
