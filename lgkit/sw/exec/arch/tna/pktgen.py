"""Tofino 1's packet generator on the TNA model: timer (one-shot, periodic) and port-down
applications the control plane configures at run time, and the packets they make (the 6-byte
pktgen header of tofino1_base.p4 before the application's payload) at their virtual times.

Commands (the same words in STF and `lgkit switch`'s control; times in ns):
  pktgen_timer APP PERIOD [one_shot] [pipe=P] [batches=N] [packets=N] [ibg=NS] [ipg=NS]
               [payload=HEX]
  pktgen_port_down APP [pipe=P] [packets=N] [ipg=NS] [payload=HEX]
  pktgen_disable APP        port_down PORT (the port-down applications fire for PORT)
A timer application fires PERIOD after it is configured (one_shot: once; else every PERIOD);
a trigger at T makes `batches` x `packets` packets, packet p of batch b at T + b*ibg + p*ipg,
entering ingress on the pipe's generator port (local port 68, shared with recirculation on
Tofino 1) with pipe_id, app_id, batch_id b and packet_id p in the header (port-down: the port
and packet_id)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from itertools import islice
from typing import Any, Protocol

APPS = 8  # app_id: bit<3>
PIPES = 4  # pipe_id: bit<2>
LOCAL_PORT = 68
HEADER_BYTES = 6
DEFAULT_PAYLOAD = bytes(58)  # a 64-byte frame with the header
MAX_PACKETS = 1 << 16  # batch_id and packet_id: bit<16>
MAX_BURST = 4096
"Packets one trigger may make on the model (batches x packets)."
MAX_DUE = 100_000
"Packets the model generates for one stretch of time (an STF `wait`, a packet's arrival)."
USAGE = {
    "pktgen_timer": "APP PERIOD_NS [one_shot] [pipe=P] [batches=N] [packets=N] [ibg=NS] "
                    "[ipg=NS] [payload=HEX]",
    "pktgen_port_down": "APP [pipe=P] [packets=N] [ipg=NS] [payload=HEX]",
    "pktgen_disable": "APP",
    "port_down": "PORT",
}
FOREVER_NS = 1 << 62
Packet = tuple[int, int, bytes]  # (time ns, ingress port, bytes)


@dataclass(frozen=True)
class App:
    """One configured application."""

    app_id: int
    trigger: str  # "periodic", "one_shot" or "port_down"
    period_ns: int = 0
    start_ns: int = 0
    pipe: int = 0
    batches: int = 1
    packets: int = 1
    ibg_ns: int = 0
    ipg_ns: int = 0
    payload: bytes = DEFAULT_PAYLOAD

    @property
    def port(self) -> int:
        return self.pipe << 7 | LOCAL_PORT

    def header(self, batch: int, packet: int, down_port: int | None) -> bytes:
        first = bytes([self.pipe << 3 | self.app_id])
        if down_port is None:
            return first + bytes(1) + batch.to_bytes(2, "big") + packet.to_bytes(2, "big")
        return first + down_port.to_bytes(2, "big") + packet.to_bytes(2, "big")

    def burst(self, t_ns: int, down_port: int | None = None) -> list[Packet]:
        """The packets of one trigger at `t_ns`."""
        return [(t_ns + b * self.ibg_ns + p * self.ipg_ns, self.port,
                 self.header(b, p, down_port) + self.payload)
                for b in range(self.batches) for p in range(self.packets)]

    def span_ns(self) -> int:
        return (self.batches - 1) * self.ibg_ns + (self.packets - 1) * self.ipg_ns

    def triggers(self, start_ns: int, end_ns: int) -> range:
        """The trigger times in [start_ns, end_ns)."""
        first = self.start_ns + self.period_ns
        if self.trigger == "one_shot":
            return range(first, first + 1) if start_ns <= first < end_ns else range(0)
        k = max(0, -(-(start_ns - first) // self.period_ns))
        return range(first + k * self.period_ns, end_ns, self.period_ns)


def parse_int(text: str, what: str, low: int, high: int) -> int:
    """An integer word (0x.. allowed) in low..high (ValueError naming `what`)."""
    try:
        value = int(text, 0)
    except ValueError:
        raise ValueError(f"{what} must be an integer, got {text[:40]!r}") from None
    if not low <= value <= high:
        raise ValueError(f"{what} must be in {low}..{high}, got {value}")
    return value


OPTIONS = {"pipe": (0, PIPES - 1), "batches": (1, MAX_PACKETS), "packets": (1, MAX_PACKETS),
           "ibg": (0, 10**12), "ipg": (0, 10**12)}


def parse_app(keyword: str, words: list[str], now_ns: int) -> App:
    """The application a pktgen_timer / pktgen_port_down command configures (ValueError: one
    line naming the bad word)."""
    if not words:
        raise ValueError(f"usage: {keyword} {USAGE[keyword]}")
    app = App(parse_int(words[0], "APP", 0, APPS - 1), "port_down", start_ns=now_ns)
    rest = words[1:]
    if keyword == "pktgen_timer":
        if not rest:
            raise ValueError(f"usage: {keyword} {USAGE[keyword]}")
        app = replace(app, trigger="periodic", period_ns=parse_int(rest[0], "PERIOD_NS", 1, 10**15))
        rest = rest[1:]
        if rest and rest[0] == "one_shot":
            app, rest = replace(app, trigger="one_shot"), rest[1:]
    for word in rest:
        name, sep, value = word.partition("=")
        allowed = ("pipe", "packets", "ipg", "payload") if app.trigger == "port_down" \
            else (*OPTIONS, "payload")
        if not sep or name not in allowed:
            raise ValueError(f"unknown option {word[:40]!r} (usage: {keyword} {USAGE[keyword]})")
        if name == "payload":
            app = replace(app, payload=_payload(value))
        else:
            field = {"ibg": "ibg_ns", "ipg": "ipg_ns"}.get(name, name)
            numbers: dict[str, Any] = {field: parse_int(value, name, *OPTIONS[name])}
            app = replace(app, **numbers)
    if app.batches * app.packets > MAX_BURST:
        raise ValueError(f"batches x packets must be at most {MAX_BURST} on the model, got "
                         f"{app.batches * app.packets}")
    return app


def _payload(text: str) -> bytes:
    try:
        return bytes.fromhex(text)
    except ValueError:
        raise ValueError(f"payload must be hex bytes, got {text[:40]!r}") from None


class PacketGenerator:
    """The applications of one pipeline and the time up to which their packets were made."""

    def __init__(self) -> None:
        self.apps: dict[int, App] = {}
        self.made_to_ns = 0
        self.version = 0
        "Changes with every (re)configuration: a switch's scheduled triggers check it."

    def command(self, keyword: str, words: list[str], now_ns: int) -> list[Packet]:
        """Run one of the commands of USAGE at `now_ns`; the packets it makes at once
        (port_down's)."""
        self.version += 1
        if keyword == "pktgen_disable":
            if len(words) != 1:
                raise ValueError(f"usage: {keyword} {USAGE[keyword]}")
            self.apps.pop(parse_int(words[0], "APP", 0, APPS - 1), None)
            return []
        if keyword == "port_down":
            if len(words) != 1:
                raise ValueError(f"usage: {keyword} {USAGE[keyword]}")
            port = parse_int(words[0], "PORT", 0, 511)
            return sorted(p for app in self.apps.values() if app.trigger == "port_down"
                          for p in app.burst(now_ns, port))
        app = parse_app(keyword, words, now_ns)
        self.apps[app.app_id] = app
        self.made_to_ns = max(self.made_to_ns, now_ns)
        return []

    def due(self, end_ns: int) -> list[Packet]:
        """The timer packets from `made_to_ns` up to (not including) `end_ns`, in time order
        (then by app id); made_to_ns moves to end_ns. More than MAX_DUE: ValueError."""
        start, out = self.made_to_ns, list[Packet]()
        for app_id in sorted(self.apps):
            app = self.apps[app_id]
            if app.trigger == "port_down":
                continue
            for t in app.triggers(start - app.span_ns(), end_ns):
                out.extend(p for p in app.burst(t) if start <= p[0] < end_ns)
                if len(out) > MAX_DUE:
                    raise ValueError(f"the packet generator would make more than {MAX_DUE} "
                                     f"packets in {end_ns - start} ns (app {app_id})")
        self.made_to_ns = max(start, end_ns)
        return sorted(out, key=lambda p: p[0])

    def next_ns(self) -> int | None:
        """When the next timer packet is due (at or after made_to_ns), None if none will be."""
        best: int | None = None
        for app in self.apps.values():
            if app.trigger == "port_down":
                continue
            for t in islice(app.triggers(self.made_to_ns - app.span_ns(), FOREVER_NS), 2):
                times = [p[0] for p in app.burst(t) if p[0] >= self.made_to_ns]
                if times and (best is None or min(times) < best):
                    best = min(times)
        return best


class Timers(Protocol):
    """A switch clock (lgkit/sw/switch/clock.py)."""

    def now_ns(self) -> int: ...

    def call_at(self, t_ns: int, fn: Callable[..., object], *args: object) -> None: ...


class Running:
    """A pipeline's packet generator on a switch's clock: each packet is `inject`ed (into the
    ingress, on the generator port) at its time; `arm` again after every command."""

    def __init__(self, gen: PacketGenerator, clock: Timers,
                 inject: Callable[[int, bytes], None]) -> None:
        self.gen = gen
        self.clock = clock
        self.inject = inject

    def command(self, keyword: str, words: list[str]) -> None:
        for _, port, data in self.gen.command(keyword, words, self.clock.now_ns()):
            self.inject(port, data)
        self.arm()

    def stop(self) -> None:
        """No more packets (the switch's program changed): the armed timer finds a new version."""
        self.gen.apps.clear()
        self.gen.version += 1

    def arm(self) -> None:
        t = self.gen.next_ns()
        if t is not None:
            self.clock.call_at(max(t, self.clock.now_ns()), self._fire, self.gen.version, t)

    def _fire(self, version: int, t_ns: int) -> None:
        if version != self.gen.version:  # reconfigured since: that command armed again
            return
        for _, port, data in self.gen.due(max(t_ns, self.clock.now_ns()) + 1):
            self.inject(port, data)
        self.arm()
