"""A topology spec as a network in virtual time: one built-in switch per spec switch, scripted
hosts, links at one rate; each switch's ports are numbered 1, 2, ... in the spec's link order."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from lgkit.core.topology import TopologySpec
from lgkit.schemes.entries import Write, to_pipeline
from lgkit.sw.exec.pipeline import Pipeline
from lgkit.sw.lang.frontend.compiler import compile_file
from lgkit.sw.switch.switch import Switch
from lgkit.sw.switch.vnet import Host, VirtualNetwork

P4_DIR = Path(__file__).resolve().parents[2] / "p4"
PRIORITY_QUEUES = 8
PASS_LATENCY_NS = 300
"Each pipeline pass takes this long, so a recirculating packet (LinkGuardian) advances time."


@functools.cache
def compiled(program: str) -> Any:
    """p4/<program>.p4 compiled once per process."""
    return compile_file(str(P4_DIR / f"{program}.p4"))


class VirtualFabric:
    """The network of a spec, every switch running `program` (p4/NAME.p4)."""

    def __init__(self, spec: TopologySpec, program: str, rate_bps: float, delay_ns: int = 1000,
                 seed: int = 1, host_rate_bps: float | None = None,
                 programs: dict[str, str] | None = None) -> None:
        """`rate_bps` on links between switches, `host_rate_bps` (default the same) on links
        to hosts; `programs` gives some switches another program than `program`."""
        self.spec = spec
        self.net = VirtualNetwork(seed=seed)
        self.pipelines: dict[str, Pipeline] = {}
        self.switches: dict[str, Switch] = {}
        self._ports: dict[tuple[str, str], int] = {}
        for index, name in enumerate(spec.switches):
            chosen = (programs or {}).get(name, program)
            pipeline = Pipeline.load(compiled(chosen), seed=seed * 1000 + index)
            self.pipelines[name] = pipeline
            self.switches[name] = self.net.add_switch(name, pipeline,
                                                      pass_latency_ns=PASS_LATENCY_NS,
                                                      priority_queues=PRIORITY_QUEUES)
        self.hosts: dict[str, Host] = {name: self.net.add_host(name) for name in spec.hosts}
        for a, b in spec.links:
            to_host = a in self.hosts or b in self.hosts
            rate = host_rate_bps if to_host and host_rate_bps else rate_bps
            self.net.link(self._node(a), self._node(b), port_a=self._number(a, b),
                          port_b=self._number(b, a), rate_bps=rate, delay_ns=delay_ns)

    def _node(self, name: str) -> Any:
        return self.switches.get(name) or self.hosts[name]

    def _number(self, node: str, neighbour: str) -> int | None:
        if node not in self.switches:
            return None
        taken = sum(1 for (s, _) in self._ports if s == node)
        self._ports[(node, neighbour)] = taken + 1
        return taken + 1

    def port_of(self, switch: str, neighbour: str) -> int:
        """The switch's port facing a neighbour."""
        return self._ports[(switch, neighbour)]

    def apply(self, switch: str, writes: Iterable[Write]) -> None:
        """Table writes on one switch."""
        to_pipeline(self.pipelines[switch], writes)

    def set_queue_depths(self, depths: dict[int, int]) -> None:
        """TM queue depth (packets) per priority on every port of every switch."""
        for switch in self.switches.values():
            for priority, depth in depths.items():
                switch.tm.set_queue_depth(depth, prio=priority)

    def run(self, until_ns: int | None = None) -> None:
        """Run the simulation (until no event is left, or `until_ns`)."""
        self.net.run(until_ns)
