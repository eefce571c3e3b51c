"""The virtual-time event loop in C (loop_c.py) for a configured LGNet whose switches run on the
native engine: the same events in the same (time, insertion) order as the Python simulator,
link losses drawn from the links' own Mersenne Twister states, so a seed gives the same run.

Covered: the switches' passes and the jobs they make (I2E and E2E clones with their field
lists, multicast replicas, recirculation, truncation), strict-priority queues capped in packets
and bytes, counted in cells, shaped at the port's rate, clone lanes, the ingress, egress,
recirculation and clone latencies; link directions with rate, delay, minimum frame and i.i.d.
or Gilbert-Elliott loss; one line-rate source into a switch port and counting sinks. The
passes are the engine's exported functions, called through the pointers `PASSES` names (the
seam where the native device layer comes in). What it does not model (queue packet rates,
pauses, resubmission, meters wrapped around a link, host handlers) is refused with
NativeLoopError, before the run or when a pass needs it.
"""

from __future__ import annotations

import ctypes
import itertools
import random
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lgkit.core.frames import ID_OFFSET
from lgkit.sim.loop_c import SOURCE
from lgkit.sw.exec.native.build import shared_library
from lgkit.sw.exec.native.engine import TAIL
from lgkit.sw.exec.native.layout import Unsupported
from lgkit.sw.switch.loss import GilbertElliott, IidLoss
from lgkit.sw.switch.switch import Switch
from lgkit.sw.switch.vnet import Host, LinkDirection

if TYPE_CHECKING:
    from lgkit.sim.scenario import LGNet
    from lgkit.sw.exec.native.engine import NativeEngine

U64, U32, INT, PTR, DBL = (ctypes.c_uint64, ctypes.c_uint32, ctypes.c_int, ctypes.c_void_p,
                           ctypes.c_double)
U64P = ctypes.POINTER(U64)
U32P = ctypes.POINTER(U32)
SIGNATURES = {
    "ns_new": ([], PTR),
    "ns_free": ([PTR], None),
    "ns_switch": ([PTR, PTR, ctypes.POINTER(PTR), PTR, PTR, U32, U32, U32, U32P, U64, U32, U32,
                   U64P, U64P, U32, U64P, U32, U32, U32P, U32], INT),
    "ns_queue": ([PTR, INT, INT, INT, U32, U32, U64], INT),
    "ns_port_rate": ([PTR, INT, INT, INT, U64, U64, U64], INT),
    "ns_cells": ([PTR, INT, U64], None),
    "ns_mcast": ([PTR, INT, U64P, U32], INT),
    "ns_queue_cells": ([PTR, INT, INT, U32, U64P], None),
    "ns_host": ([PTR, U32, U64, U64, U64, U64], INT),
    "ns_link": ([PTR, INT, INT, INT, INT, INT, U64, U64, U64, U64, INT, DBL, DBL, U32P, INT],
                INT),
    "ns_source": ([PTR, INT, INT, U64, U64, U64, ctypes.c_char_p, U32P,
                   ctypes.POINTER(DBL), U32, U32P, INT, U32, U64, U64, U64], INT),
    "ns_run": ([PTR, U64], INT),
    "ns_now": ([PTR], U64),
    "ns_events": ([PTR], U64),
    "ns_emitted": ([PTR], U64),
    "ns_switch_stats": ([PTR, INT], U64P),
    "ns_dir_stats": ([PTR, INT, U64P], None),
    "ns_dir_rng": ([PTR, INT, U32P], INT),
    "ns_host_stats": ([PTR, INT, U64P], None),
    "ns_host_log": ([PTR, INT], U64P),
    "ns_host_seen": ([PTR, INT], ctypes.POINTER(ctypes.c_uint8)),
    "ns_stress": ([PTR, INT, INT, INT, INT, INT, U32, U32, U32, U32, U64, U64, U64, U64P, U64,
                   U64, U64, U64, U64, U64, INT, DBL, DBL, U64, U64, U64], INT),
    "ns_stress_counts": ([PTR, U64P], None),
    "ns_stress_list": ([PTR, INT, U64P], U64P),
    "ns_stress_originals": ([PTR], ctypes.POINTER(ctypes.c_uint8)),
    "ns_stress_gaps": ([PTR, U64P, ctypes.POINTER(U64P), ctypes.POINTER(U64P)], None),
    "ns_stress_holes": ([PTR, ctypes.POINTER(ctypes.c_int64), U64], U64),
}
STOPS = {1: "a pass resubmitted (not modelled natively)", 2: "out of memory"}
SWITCH_STATS = ("ingress", "recirc", "egress", "ingress_drop", "egress_drop", "queue_full",
                "input_queue_full", "transmitted", "no_such_port", "recirc_queue_full",
                "recirculations", "lane_recirculations", "bad_priority")
SM = ("priority", "egress_rid", "instance_type", "ingress_port", "egress_spec", "mcast_grp")
PASSES = ("lg_ingress", "lg_egress_saved", "lg_state_save", "lg_ingress_job", "lg_parse")
NO_SLOT = 0xFFFFFFFF
DEFAULT_DEPTH = 64  # of a queue the Python TM has not made yet (loop_c's new_port)
_PLAIN_DELIVERY = ("Host.receive", "VirtualNetwork._receiver.<locals>.<lambda>")
"""What VirtualNetwork.link makes a direction deliver to (anything else wraps it)."""


class NativeLoopError(ValueError):
    """The native loop cannot run this network, or stopped (the message says why)."""


@dataclass
class SinkCounts:
    """What a host counted: frames, duplicates, out-of-order ids, deliveries in its window."""

    received: int
    duplicates: int
    out_of_order: int
    in_window: int
    arrivals: list[tuple[int, int]]
    """(time ns, packet id) of the first `log` arrivals."""
    delivered: bytes
    """1 at each packet id that arrived (ids below `ids`)."""


def _library() -> ctypes.CDLL:
    try:
        lib = ctypes.CDLL(str(shared_library(SOURCE, True)))
    except Unsupported as exc:
        raise NativeLoopError(f"the native loop: {exc.what}") from None
    for name, (args, result) in SIGNATURES.items():
        getattr(lib, name).argtypes = args
        getattr(lib, name).restype = result
    return lib


def _engine(switch: Switch) -> NativeEngine:
    native = getattr(getattr(switch.pipeline, "arch", None), "native", None)
    if native is None:
        raise NativeLoopError("a switch is not on the native engine (LGKIT_ENGINE=native)")
    return native


class NativeLoop:
    """An LGNet's switches, links and hosts copied into the C loop; `source` adds the
    generator, `run` advances virtual time, the counters are read back. The Python clock must
    have nothing scheduled: the loop owns time from here (`now_ns`). After each run the links'
    generators, frame counts and loss states are handed back to their Python objects."""

    def __init__(self, net: LGNet, log: int = 0, ids: int = 0,
                 window: tuple[int, int] = (0, 1 << 62), harness: bool = False) -> None:
        if net.net.clock.next_timer_ns() is not None:
            raise NativeLoopError("events are already scheduled in the Python simulator")
        self.harness = harness
        """The stress test's taps, sink and paused queue are modelled (native_stress.py)."""
        if net.config.wire_log or any(h.keep_frames or (h.handlers and not harness)
                                      for h in net.hosts.values()):
            raise NativeLoopError("wire logs, kept frames and host handlers are Python's; "
                                  "the native loop counts arrivals itself")
        self._engines = {name: _engine(sw) for name, sw in net.switches.items()}
        self.lib = lib = _library()
        self.net = net
        self.ptr = PTR(lib.ns_new())
        weakref.finalize(self, lib.ns_free, self.ptr)
        self.switch_index = {name: self._add_switch(sw, self._engines[name])
                             for name, sw in net.switches.items()}
        self.host_index = {name: self._checked(lib.ns_host(self.ptr, ID_OFFSET, ids, log,
                                                           *window), name)
                           for name in net.hosts}
        self.directions: list[LinkDirection] = []
        for name, sw in net.switches.items():
            for port in sorted(sw.ports):
                self._add_direction(self.switch_index[name], port, sw)
        self._log = log
        self._ids = ids

    def _checked(self, index: int, what: str) -> int:
        if index < 0:
            raise NativeLoopError(f"{what}: beyond the native loop's limits")
        return index

    def _add_switch(self, sw: Switch, engine: NativeEngine) -> int:
        if any(d != DEFAULT_DEPTH for d in sw.tm._default_depth) or any(sw.tm._default_pps):
            raise NativeLoopError("default queue depths or rates other than the TM's first ones "
                                  "are not modelled")
        elib, ctx, program, pl = engine.lib, engine.ctx, engine.program, engine.pl
        engine.refresh()
        nslots = len(program.widths)
        fns = (PTR * len(PASSES))(*(ctypes.cast(getattr(elib, f), PTR) for f in PASSES))
        sm = (U32 * len(SM))(*(program.sm.get(name, NO_SLOT) for name in SM))
        sessions = [v for session, targets in sorted(pl.clone_sessions.items())
                    for port, rid in targets for v in (session, port, rid)]
        fls = [v for fl, slots in sorted(program.field_lists.items())
               for v in (fl, len(slots), *slots)]
        rq = nslots + 3
        hdr = [*program.header_slots, rq - 3, rq - 2, rq - 1]
        latencies = (sw.ingress_latency_ns, sw.egress_latency_ns, sw.recirc_latency_ns,
                     sw.clone_latency_ns)
        index = self.lib.ns_switch(
            self.ptr, ctx, fns, elib.lg_slots(ctx), elib.lg_clone_slots(ctx), nslots + TAIL,
            program.live, rq,
            sm, pl.drop_port, program.max_header_bytes, sw.tm.priority_queues,
            _u64s(latencies), _u64s(sessions), len(sessions) // 3, _u64s(fls),
            len(program.field_lists), len(fls), (U32 * max(1, len(hdr)))(*hdr), len(hdr))
        self._checked(index, "switch")
        self.lib.ns_cells(self.ptr, index, sw.tm.cell_bytes)
        groups = [v for group, members in sorted(pl.mc_groups.items())
                  for rid, port in members for v in (group, rid, port)]
        self._checked(self.lib.ns_mcast(self.ptr, index, _u64s(groups), len(groups) // 3),
                      "multicast groups")
        for lane, ports in ((0, sw.tm.ports), (1, sw.tm.clone_lanes)):
            for port, state in ports.items():
                self._add_port(index, port, lane, state)
        return index

    def _add_port(self, index: int, port: int, lane: int, state: Any) -> None:
        """A port's (or clone lane's) rate and queues, as the Python TM has them."""
        if (state.burst_bytes and state.rate_bps) or any(q.pps or q.paused
                                                         for q in state.queues):
            raise NativeLoopError(f"port {port}: queue rates, pauses and bursts are not "
                                  "modelled")
        self.lib.ns_port_rate(self.ptr, index, port, lane, state.rate_bps, state.framing_bytes,
                              state.min_frame_bytes)
        for prio, q in enumerate(state.queues):
            self.lib.ns_queue(self.ptr, index, port, lane, prio, min(q.depth, 0xFFFFFFFF),
                              q.depth_bytes)

    def _add_direction(self, index: int, port: int, sw: Switch) -> None:
        direction = sw.ports[port]
        if not isinstance(direction, LinkDirection) or (direction.taps and not self.harness):
            raise NativeLoopError(f"port {port}: not a plain simulated link (taps or a backend)")
        kind, node, to_port = self._far_end(direction)
        loss, p1, p2 = _loss(direction)
        _, words, _ = direction.rng.getstate()
        mt = (U32 * 624)(*words[:624])
        d = self.lib.ns_link(self.ptr, index, port, kind, node, to_port, direction.rate_bps,
                             direction.delay_ns, direction.framing_bytes,
                             direction.min_frame_bytes, loss, p1, p2, mt, words[624])
        self._checked(d, f"link at port {port}")
        self.directions.append(direction)

    def _far_end(self, direction: LinkDirection) -> tuple[int, int, int]:
        """(0 switch | 1 host, its index, its port) where `direction` delivers."""
        for link in self.net.net.links:
            if direction not in (link.forward, link.backward):
                continue
            node, back = (link.b, link.backward) if direction is link.forward \
                else (link.a, link.forward)
            if getattr(direction.deliver, "__qualname__", "") not in _PLAIN_DELIVERY \
                    and not self.harness:
                raise NativeLoopError("a link's delivery is wrapped in Python (a meter or a "
                                      "queue): not modelled natively")
            if isinstance(node, Host):
                return 1, self.host_index[node.name], 0
            name = self.net.net.name_of(node)
            ports = [p for p, b in node.ports.items() if b is back]
            return 0, self.switch_index[name], ports[0]
        raise NativeLoopError("a port's link is not in the network")

    def source(self, switch: str, port: int, rate_bps: float, templates: Sequence[bytes],
               count: int, weights: Sequence[float] = (1.0,), rng: random.Random | None = None,
               first_id: int = 0, framing_bytes: int = 24, start_ns: int = 0,
               period_ps: int | None = None) -> None:
        """A line-rate generator (LineRateSource) of `count` test frames with ids first_id..
        at ID_OFFSET into `switch`'s `port`, back to back at `rate_bps` or every `period_ps`;
        with several `templates`, each frame's is drawn as `rng.choices(templates, weights)`
        draws it (FrameStream.next_size)."""
        if (count < 0 or rate_bps <= 0 or not templates or len(weights) != len(templates)
                or any(len(t) < ID_OFFSET + 4 for t in templates)
                or (len(templates) > 1 and rng is None) or (period_ps or 0) < 0):
            raise NativeLoopError("a source needs count >= 0, a rate > 0 and test frames "
                                  "(with a weight each, and a generator for several)")
        cum = list(itertools.accumulate(float(w) for w in weights))
        _, words, _ = (rng or random.Random(0)).getstate()
        status = self.lib.ns_source(
            self.ptr, self.switch_index[switch], port, int(rate_bps), framing_bytes,
            period_ps or 0, b"".join(templates), (U32 * len(templates))(*map(len, templates)),
            (DBL * len(cum))(*cum), len(templates), (U32 * 624)(*words[:624]), words[624],
            ID_OFFSET, first_id, count, start_ns)
        if status:
            raise NativeLoopError("a source: one per loop (or out of memory)")

    def run(self, until_ns: int) -> None:
        """Every event up to `until_ns`; NativeLoopError when the loop stopped early."""
        status = self.lib.ns_run(self.ptr, until_ns)
        self._hand_back()
        if status:
            raise NativeLoopError(f"the native loop stopped at {self.now_ns} ns: "
                                  f"{STOPS.get(status, status)}")

    def _hand_back(self) -> None:
        """The links' generators and the pipelines' logs back to Python."""
        for d, direction in enumerate(self.directions):
            mt = (U32 * 624)()
            index = self.lib.ns_dir_rng(self.ptr, d, mt)
            direction.rng.setstate((3, (*mt, index), None))
            stats = (U64 * 3)()
            self.lib.ns_dir_stats(self.ptr, d, stats)
            direction.sent, direction.lost = stats[0], stats[1]
            if isinstance(direction.loss, GilbertElliott):
                direction.loss.bad = bool(stats[2])
        for engine in self._engines.values():
            if engine._errors[0]:
                engine._log_errors()

    @property
    def now_ns(self) -> int:
        return int(self.lib.ns_now(self.ptr))

    @property
    def events(self) -> int:
        return int(self.lib.ns_events(self.ptr))

    @property
    def emitted(self) -> int:
        return int(self.lib.ns_emitted(self.ptr))

    def switch_stats(self, switch: str) -> dict[str, int]:
        stats = self.lib.ns_switch_stats(self.ptr, self.switch_index[switch])
        return {name: int(stats[i]) for i, name in enumerate(SWITCH_STATS)}

    def sink(self, host: str) -> SinkCounts:
        index = self.host_index[host]
        out = (U64 * 5)()
        self.lib.ns_host_stats(self.ptr, index, out)
        log = self.lib.ns_host_log(self.ptr, index)
        arrivals = [(int(log[2 * i]), int(log[2 * i + 1])) for i in range(out[4])]
        seen = ctypes.string_at(self.lib.ns_host_seen(self.ptr, index), self._ids)
        return SinkCounts(int(out[0]), int(out[1]), int(out[2]), int(out[3]), arrivals, seen)



def _u64s(values: Any) -> Any:
    return (U64 * max(1, len(values)))(*values)


def _loss(direction: LinkDirection) -> tuple[int, float, float]:
    """The C loop's loss model of a direction: (0 none | 1 i.i.d. | 2 Gilbert-Elliott, p1, p2)."""
    return loss_model(direction.loss)


def loss_model(model: Any) -> tuple[int, float, float]:
    """The C loop's loss model: (0 none | 1 i.i.d. | 2 Gilbert-Elliott, p1, p2)."""
    if model is None:
        return 0, 0.0, 0.0
    if type(model) is IidLoss:
        return 1, model.p, 0.0
    if type(model) is GilbertElliott and (model.loss_good, model.loss_bad, model.bad) == (
            0.0, 1.0, False):
        return 2, model.p_gb, model.p_bg
    raise NativeLoopError(f"loss model {type(model).__name__} is not modelled natively")
