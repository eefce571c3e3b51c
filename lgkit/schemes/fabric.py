"""Routes of a topology spec for the fabric programs (p4/vertigo.p4, p4/pabo.p4): per switch,
the ports on every shortest path toward each host (the ECMP candidates), the ports that face
hosts and those that face switches."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from lgkit.core.topology import TopologySpec

PortOf = Callable[[str, str], int]
"port_of(switch, neighbour) -> the switch's port facing that neighbour."


def hops_to(spec: TopologySpec, host: str) -> dict[str, int]:
    """Hop count from every node to `host`, through switches only (BFS)."""
    adjacent: dict[str, list[str]] = {n: [] for n in spec.hosts + spec.switches}
    for a, b in spec.links:
        adjacent[a].append(b)
        adjacent[b].append(a)
    hops = {host: 0}
    queue = deque([host])
    while queue:
        node = queue.popleft()
        for nxt in adjacent[node]:
            if nxt not in hops and nxt in spec.switches:
                hops[nxt] = hops[node] + 1
                queue.append(nxt)
    return hops


@dataclass(frozen=True)
class SwitchRoutes:
    """What one switch needs to know about the topology."""

    candidates: dict[str, list[int]]
    "host -> the switch's ports on shortest paths toward it (ascending)."
    host_ports: list[int]
    switch_ports: list[int]


def switch_routes(spec: TopologySpec, switch: str, port_of: PortOf) -> SwitchRoutes:
    """The routes, host ports and switch ports of `switch`."""
    neighbours = [b if a == switch else a for a, b in spec.links if switch in (a, b)]
    candidates: dict[str, list[int]] = {}
    for host in spec.hosts:
        hops = hops_to(spec, host)
        if switch not in hops:
            continue
        closer = [n for n in neighbours if hops.get(n, hops[switch]) == hops[switch] - 1]
        candidates[host] = sorted(port_of(switch, n) for n in closer)
    return SwitchRoutes(
        candidates=candidates,
        host_ports=sorted(port_of(switch, n) for n in neighbours if n in spec.hosts),
        switch_ports=sorted(port_of(switch, n) for n in neighbours if n in spec.switches))


def ip_value(address: str) -> int:
    """An IPv4 address as an int."""
    a, b, c, d = (int(part) for part in address.split("."))
    return a << 24 | b << 16 | c << 8 | d


def mac_value(address: str) -> int:
    """A MAC address as an int."""
    return int(address.replace(":", ""), 16)
