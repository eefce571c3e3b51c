"""Virtual-time network: switches, scripted hosts and lossy links under one discrete-event clock."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .clock import VirtualClock
from .switch import Switch
from .tm import wire_start_ps

PS_PER_S = 10**12
ETHERNET_FRAMING_BYTES = 24  # preamble + SFD (8), FCS (4), inter-frame gap (12)


class LossModel:
    """Decides, packet by packet, whether a link loses a frame."""

    def lost(self, rng: random.Random) -> bool:
        raise NotImplementedError


class IidLoss(LossModel):
    """Each frame is lost independently with probability `p`."""

    def __init__(self, p: float) -> None:
        if not 0.0 <= p <= 1.0:
            raise ValueError("loss probability must be in [0, 1]")
        self.p = p

    def lost(self, rng: random.Random) -> bool:
        return rng.random() < self.p


class GilbertElliott(LossModel):
    """Two-state Markov loss: per frame, move good->bad with `p_gb`, bad->good with `p_bg`,
    then lose the frame with `loss_good` or `loss_bad` depending on the state."""

    def __init__(self, p_gb: float, p_bg: float, loss_good: float = 0.0,
                 loss_bad: float = 1.0) -> None:
        for value in (p_gb, p_bg, loss_good, loss_bad):
            if not 0.0 <= value <= 1.0:
                raise ValueError("Gilbert-Elliott probabilities must be in [0, 1]")
        self.p_gb, self.p_bg = p_gb, p_bg
        self.loss_good, self.loss_bad = loss_good, loss_bad
        self.bad = False

    def lost(self, rng: random.Random) -> bool:
        if self.bad:
            self.bad = rng.random() >= self.p_bg
        else:
            self.bad = rng.random() < self.p_gb
        return rng.random() < (self.loss_bad if self.bad else self.loss_good)


class LinkDirection:
    """One direction of a link: a FIFO serializer at `rate_bps`, then loss, then `delay_ns`.

    A frame handed over at time t starts on the wire when the previous one is done (see
    `wire_start_ps`), occupies
    (len + framing) * 8 / rate, and the far end receives it `delay_ns` after its last bit
    (rounded up to a whole nanosecond).
    """

    def __init__(self, clock: VirtualClock, rate_bps: float, delay_ns: int, framing_bytes: int,
                 loss: LossModel | None, rng: random.Random,
                 deliver: Callable[[bytes], None]) -> None:
        if rate_bps <= 0:
            raise ValueError("link rate must be > 0")
        self.clock = clock
        self.rate_bps = int(rate_bps)
        self.delay_ns = delay_ns
        self.framing_bytes = framing_bytes
        self.loss = loss
        self.rng = rng
        self.deliver = deliver
        self.tat_ps = 0
        self.sent = 0
        self.lost = 0

    def wire_ps(self, nbytes: int) -> int:
        return (nbytes + self.framing_bytes) * 8 * PS_PER_S // self.rate_bps

    def send(self, data: bytes) -> None:
        start_ps = wire_start_ps(self.clock.now_ns(), self.tat_ps)
        self.tat_ps = end_ps = start_ps + self.wire_ps(len(data))
        self.sent += 1
        if self.loss is not None and self.loss.lost(self.rng):
            self.lost += 1
            return
        self.clock.call_at(-(-end_ps // 1000) + self.delay_ns, self.deliver, data)


class Link:
    """A full-duplex link between two nodes: `forward` carries a->b, `backward` b->a."""

    def __init__(self, a: Any, b: Any, forward: LinkDirection, backward: LinkDirection) -> None:
        self.a, self.b = a, b
        self.forward, self.backward = forward, backward


class Host:
    """A scripted end host with one interface: a packet source and a sink.

    `received` lists (arrival time ns, frame); `handlers` are called as handler(host, t, frame)
    for every arrival, to script replies.
    """

    def __init__(self, name: str, clock: VirtualClock) -> None:
        self.name = name
        self.clock = clock
        self.received: list[tuple[int, bytes]] = []
        self.handlers: list[Callable[[Host, int, bytes], None]] = []
        self.tx: LinkDirection | None = None

    def receive(self, data: bytes) -> None:
        now = self.clock.now_ns()
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

    def add_switch(self, name: str, pipeline: Any = None, pass_latency_ns: int = 0,
                   **switch_options: Any) -> Switch:
        self._check_name(name)
        switch = Switch(clock=self.clock, pass_latency_ns=pass_latency_ns, **switch_options)
        if pipeline is not None:
            switch.set_pipeline(pipeline)
        self.switches[name] = switch
        return switch

    def add_host(self, name: str) -> Host:
        self._check_name(name)
        host = Host(name, self.clock)
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
             delay_ns: int = 0, loss: LossModel | None = None,
             loss_back: LossModel | None = None,
             framing_bytes: int = ETHERNET_FRAMING_BYTES) -> Link:
        """Connect two nodes. A switch end needs a port number (`port_a`/`port_b`, or `port`
        when exactly one end is a switch). `loss` acts on a->b, `loss_back` on b->a (each needs
        its own model object). A switch port gets the link rate as its TM port rate, so the
        queue builds in the switch where P4 sees it."""
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
                                self._rng(index, "ab"), self._receiver(b, port_b))
        backward = LinkDirection(self.clock, rate_bps, delay_ns, framing_bytes, loss_back,
                                 self._rng(index, "ba"), self._receiver(a, port_a))
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
        node.tm.set_port_rate(tx.rate_bps, port, burst_bytes=0, framing_bytes=tx.framing_bytes)

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
