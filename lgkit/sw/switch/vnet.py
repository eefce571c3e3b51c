"""Virtual-time network: switches, scripted hosts and lossy links under one discrete-event clock."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from .clock import VirtualClock
from .loss import FrameLoss
from .switch import Switch
from .tm import wire_start_ps

if TYPE_CHECKING:
    from ..exec.pipeline import Pipeline

PS_PER_S = 10**12
ETHERNET_FRAMING_BYTES = 24  # preamble + SFD (8), FCS (4), inter-frame gap (12)


class LinkDirection:
    """One direction of a link: a FIFO serializer at `rate_bps`, then loss, then `delay_ns`.

    A frame handed over at time t starts on the wire when the previous one is done (see
    `wire_start_ps`), occupies
    (max(len, min_frame) + framing) * 8 / rate, and the far end receives it `delay_ns` after
    its last bit (rounded up to a whole nanosecond). `taps` see every frame put on the wire as
    tap(frame, lost, arrival_ns): whether the link lost it and when the far end got (or would
    have got) it.
    """

    def __init__(self, clock: VirtualClock, rate_bps: float, delay_ns: int, framing_bytes: int,
                 loss: FrameLoss | None, rng: random.Random,
                 deliver: Callable[[bytes], None], min_frame_bytes: int = 0) -> None:
        if rate_bps <= 0:
            raise ValueError("link rate must be > 0")
        self.clock = clock
        self.rate_bps = int(rate_bps)
        self.delay_ns = delay_ns
        self.framing_bytes = framing_bytes
        self.min_frame_bytes = min_frame_bytes
        self.loss = loss
        self.rng = rng
        self.deliver = deliver
        self.taps: list[Callable[[bytes, bool, int], None]] = []
        self.tat_ps = 0
        self.sent = 0
        self.lost = 0

    def wire_ps(self, nbytes: int) -> int:
        return ((max(nbytes, self.min_frame_bytes) + self.framing_bytes) * 8 * PS_PER_S
                // self.rate_bps)

    def send(self, data: bytes) -> None:
        start_ps = wire_start_ps(self.clock.now_ns(), self.tat_ps)
        self.tat_ps = end_ps = start_ps + self.wire_ps(len(data))
        self.sent += 1
        arrival_ns = -(-end_ps // 1000) + self.delay_ns
        lost = self.loss is not None and self.loss.lost(self.rng)
        for tap in self.taps:
            tap(data, lost, arrival_ns)
        if lost:
            self.lost += 1
            return
        self.clock.call_at(arrival_ns, self.deliver, data)


class Link:
    """A full-duplex link between two nodes: `forward` carries a->b, `backward` b->a."""

    def __init__(self, a: Switch | Host, b: Switch | Host, forward: LinkDirection,
                 backward: LinkDirection) -> None:
        self.a, self.b = a, b
        self.forward, self.backward = forward, backward


class Host:
    """A scripted end host with one interface: a packet source and a sink.

    `received` lists (arrival time ns, frame) unless `keep_frames` is off (long runs count in
    a handler instead); `handlers` are called as handler(host, t, frame) for every arrival, to
    script replies.
    """

    def __init__(self, name: str, clock: VirtualClock, keep_frames: bool = True) -> None:
        self.name = name
        self.clock = clock
        self.keep_frames = keep_frames
        self.received: list[tuple[int, bytes]] = []
        self.handlers: list[Callable[[Host, int, bytes], None]] = []
        self.tx: LinkDirection | None = None

    def receive(self, data: bytes) -> None:
        now = self.clock.now_ns()
        if self.keep_frames:
            self.received.append((now, data))
        for handler in self.handlers:
            handler(self, now, data)

    def send(self, data: bytes, at_ns: int | None = None) -> None:
        """Hand a frame to the host's link now or at `at_ns` (it waits for the wire)."""
        if self.tx is None:
            raise ValueError(f"host {self.name} is not linked")
        if at_ns is None:
            self.tx.send(data)
        else:
            self.clock.call_at(at_ns, self.tx.send, data)

    def send_at_rate(self, packets: Iterable[bytes], pps: float, start_ns: int = 0) -> None:
        """Send the frames of `packets` (a list or a generator, pulled lazily) one every
        1/pps seconds from `start_ns`; the k-th leaves at start + round(k * 1e9 / pps)."""
        if pps <= 0:
            raise ValueError("rate must be > 0")
        self.clock.call_at(start_ns, self._send_next, iter(packets), pps, start_ns, 0)

    def _send_next(self, packets: Iterator[bytes], pps: float, start_ns: int, k: int) -> None:
        data = next(packets, None)
        if data is None:
            return
        self.send(data)
        self.clock.call_at(start_ns + round((k + 1) * 1e9 / pps), self._send_next, packets, pps,
                           start_ns, k + 1)


class LineRateSource:
    """A packet generator, like a switch's internal one: hands `frames` to `deliver` back to
    back at `rate_bps`.

    Frame k+1 starts exactly one wire time of frame k, (len + framing) * 8 / rate, after frame
    k (or `period_ps` after it, for a fixed period); the schedule is kept in picoseconds and
    each frame is handed over at the first whole nanosecond at or after its start, so the mean
    spacing is exact and no spacing is off by more than 1 ns. It stops when `frames` ends or
    at `until_ns`, then calls `on_end()` (at the time of the last frame). `emitted` counts the
    frames handed over.
    """

    def __init__(self, clock: VirtualClock, deliver: Callable[[bytes], None], rate_bps: float,
                 frames: Iterable[bytes], framing_bytes: int = ETHERNET_FRAMING_BYTES,
                 start_ns: int = 0, period_ps: int | None = None,
                 until_ns: int | None = None,
                 on_end: Callable[[], None] | None = None) -> None:
        if rate_bps <= 0:
            raise ValueError("rate must be > 0")
        if period_ps is not None and period_ps <= 0:
            raise ValueError("period must be > 0")
        self.clock = clock
        self.deliver = deliver
        self.rate_bps = int(rate_bps)
        self.framing_bytes = framing_bytes
        self.period_ps = period_ps
        self.until_ns = until_ns
        self.on_end = on_end
        self.frames = iter(frames)
        self.emitted = 0
        self.next_ps = start_ns * 1000
        self._schedule()

    def _schedule(self) -> None:
        data = next(self.frames, None)
        at_ns = -(-self.next_ps // 1000)
        if data is None or (self.until_ns is not None and at_ns > self.until_ns):
            if self.on_end is not None:
                self.on_end()
            return
        period = self.period_ps
        if period is None:
            period = (len(data) + self.framing_bytes) * 8 * PS_PER_S // self.rate_bps
        self.next_ps += period
        self.clock.call_at(at_ns, self._emit, data)

    def _emit(self, data: bytes) -> None:
        self.emitted += 1
        self.deliver(data)
        self._schedule()


class VirtualNetwork:
    """Switches, hosts and links in one process, deterministic for a seed.

    >>> net = VirtualNetwork(seed=1)
    >>> s1 = net.add_switch("s1", pipeline, priority_queues=3, pass_latency_ns=400)
    >>> h1 = net.add_host("h1")
    >>> net.link(h1, s1, port=1, rate_bps=100e9, delay_ns=50, loss=IidLoss(1e-3))
    >>> h1.send(frame, at_ns=0); net.run(until_ns=10_000); h2.received
    """

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.clock = VirtualClock()
        self.switches: dict[str, Switch] = {}
        self.hosts: dict[str, Host] = {}
        self.links: list[Link] = []

    @property
    def now_ns(self) -> int:
        return self.clock.now_ns()

    def add_switch(self, name: str, pipeline: Pipeline | None = None, pass_latency_ns: int = 0,
                   **switch_options: Any) -> Switch:
        self._check_name(name)
        switch = Switch(clock=self.clock, pass_latency_ns=pass_latency_ns, **switch_options)
        if pipeline is not None:
            switch.set_pipeline(pipeline)
        self.switches[name] = switch
        return switch

    def add_host(self, name: str, keep_frames: bool = True) -> Host:
        self._check_name(name)
        host = Host(name, self.clock, keep_frames)
        self.hosts[name] = host
        return host

    def _check_name(self, name: str) -> None:
        if name in self.switches or name in self.hosts:
            raise ValueError(f"node {name!r} already exists")

    def name_of(self, node: Switch | Host) -> str:
        if isinstance(node, Host):
            return node.name
        for name, switch in self.switches.items():
            if switch is node:
                return name
        raise ValueError("node does not belong to this network")

    def link(self, a: Switch | Host, b: Switch | Host, port: int | None = None,
             port_a: int | None = None, port_b: int | None = None, rate_bps: float = 100e9,
             delay_ns: int = 0, loss: FrameLoss | None = None,
             loss_back: FrameLoss | None = None,
             framing_bytes: int = ETHERNET_FRAMING_BYTES, min_frame_bytes: int = 0) -> Link:
        """Connect two nodes. A switch end needs a port number (`port_a`/`port_b`, or `port`
        when exactly one end is a switch). `loss` acts on a->b, `loss_back` on b->a (each needs
        its own model object). A switch port gets the link rate as its TM port rate, so the
        queue builds in the switch where P4 sees it. `min_frame_bytes` pads short frames on the
        wire (60: Ethernet's 64-byte minimum without the FCS that `framing_bytes` counts)."""
        if port is not None:
            if isinstance(a, Switch) == isinstance(b, Switch):
                raise ValueError("`port` needs exactly one switch end; use port_a/port_b")
            if isinstance(a, Switch):
                port_a = port
            else:
                port_b = port
        index = len(self.links)
        names = (self.name_of(a), self.name_of(b))
        forward = LinkDirection(self.clock, rate_bps, delay_ns, framing_bytes, loss,
                                self._rng(index, "ab"), self._receiver(b, port_b),
                                min_frame_bytes)
        backward = LinkDirection(self.clock, rate_bps, delay_ns, framing_bytes, loss_back,
                                 self._rng(index, "ba"), self._receiver(a, port_a),
                                 min_frame_bytes)
        self._attach(a, port_a, forward, names[0])
        self._attach(b, port_b, backward, names[1])
        link = Link(a, b, forward, backward)
        self.links.append(link)
        return link

    def _rng(self, index: int, direction: str) -> random.Random:
        return random.Random(f"{self.seed}/link{index}/{direction}")

    @staticmethod
    def _receiver(node: Switch | Host, port: int | None) -> Callable[[bytes], None]:
        if isinstance(node, Host):
            return node.receive
        if port is None:
            raise ValueError("a switch end of a link needs a port number")
        receive = node.receive
        return lambda data: receive(port, data)

    @staticmethod
    def _attach(node: Switch | Host, port: int | None, tx: LinkDirection, name: str) -> None:
        if isinstance(node, Host):
            if node.tx is not None:
                raise ValueError(f"host {name} already has a link")
            node.tx = tx
            return
        assert port is not None
        node.add_port(port, tx)
        node.tm.set_port_rate(tx.rate_bps, port, burst_bytes=0, framing_bytes=tx.framing_bytes,
                              min_frame_bytes=tx.min_frame_bytes)

    def generator(self, switch: Switch, port: int, rate_bps: float, frames: Iterable[bytes],
                  **options: Any) -> LineRateSource:
        """A packet generator feeding `switch` as arrivals on `port` (no link in between), like
        Tofino's pktgen; options as LineRateSource's."""
        receive = switch.receive
        return LineRateSource(self.clock, lambda data: receive(port, data), rate_bps, frames,
                              **options)

    def every(self, period_ns: int, fn: Callable[[int], None], start_ns: int = 0,
              until_ns: int | None = None) -> None:
        """Call fn(now_ns) every `period_ns` from `start_ns` (to sample queues, registers...),
        up to `until_ns` (without it, only `run(until_ns=...)` ends the simulation)."""
        if period_ns <= 0:
            raise ValueError("period must be > 0")

        def tick(t: int) -> None:
            fn(t)
            if until_ns is None or t + period_ns <= until_ns:
                self.clock.call_at(t + period_ns, tick, t + period_ns)

        self.clock.call_at(start_ns, tick, start_ns)

    def run(self, until_ns: int | None = None) -> None:
        """Run the simulation up to `until_ns` (or until no event is left)."""
        self.clock.run_until(until_ns)

    @property
    def events_run(self) -> int:
        return self.clock.events_run
