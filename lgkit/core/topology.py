"""Topology specs (YAML in mininet/) as plain data, and the per-switch routes they imply."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from lgkit.core.specfile import KIT_ROOT, read_spec

SPEC_DIR = KIT_ROOT / "mininet"


class SpecError(ValueError):
    """A topology spec is malformed."""


@dataclass(frozen=True)
class TopologySpec:
    """A topology as data: nodes, links, the protected link and measurement points A-D."""

    name: str
    hosts: list[str]
    switches: list[str]
    links: list[tuple[str, str]]
    protected: tuple[str, str]
    senders: list[str]
    receivers: list[str]
    points: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    plain: list[str] = field(default_factory=list)
    """Switches that only forward (no LG role, no measurement point, no loop in the topology):
    a testbed may run them as Linux bridges instead of P4 switches, to spare the CPU."""
    paper_link_gbps: float = 10.0
    description: str = ""

    def host_ip(self, host: str) -> str:
        """10.0.0.k for the k-th host (hosts share one /24; ARP is static)."""
        return f"10.0.0.{self.hosts.index(host) + 1}"

    def host_mac(self, host: str) -> str:
        """00:00:00:00:00:kk for the k-th host."""
        return "00:00:00:00:00:%02x" % (self.hosts.index(host) + 1)


def load_spec(name_or_path: str) -> TopologySpec:
    """Load mininet/NAME.yaml (or a path) and check that it is consistent."""
    path, raw = read_spec(name_or_path, SPEC_DIR, "topology", SpecError)
    try:
        spec = TopologySpec(
            name=raw["name"], hosts=list(raw["hosts"]), switches=list(raw["switches"]),
            links=[(a, b) for a, b in raw["links"]], protected=tuple(raw["protected"]),
            senders=list(raw["senders"]), receivers=list(raw["receivers"]),
            points={k: tuple(v) for k, v in raw.get("points", {}).items()},
            plain=list(raw.get("plain", [])),
            paper_link_gbps=float(raw.get("paper_link_gbps", 10)),
            description=raw.get("description", ""),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise SpecError(f"{path}: malformed topology spec ({exc})") from exc
    _check(spec, path)
    return spec


def _check(spec: TopologySpec, path: Path) -> None:
    nodes = set(spec.hosts) | set(spec.switches)
    for a, b in spec.links:
        if a not in nodes or b not in nodes:
            raise SpecError(f"{path}: link {a}-{b} names an unknown node")
    a, b = spec.protected
    if (a, b) not in spec.links and (b, a) not in spec.links:
        raise SpecError(f"{path}: protected link {a}-{b} is not a link")
    if a not in spec.switches or b not in spec.switches:
        raise SpecError(f"{path}: the protected link must join two switches")
    busy = {a, b} | {point[0] for point in spec.points.values()}
    for switch in spec.plain:
        if switch not in spec.switches or switch in busy:
            raise SpecError(f"{path}: plain switch {switch} is not a switch, or has an LG role "
                            f"or a measurement point")


WIRE = "w1"
"""The protected link is two links through this Linux bridge (the 'wire'): corruption injectors
drop on the wire's receiving port, where any switch implementation sees the loss."""


def neighbours(spec: TopologySpec) -> dict[str, list[str]]:
    """Adjacency, with each node's protected-link neighbour listed first (routes prefer it)."""
    adj: dict[str, list[str]] = {n: [] for n in spec.hosts + spec.switches}
    for x, y in spec.links:
        adj[x].append(y)
        adj[y].append(x)
    a, b = spec.protected
    for node, other in ((a, b), (b, a)):
        adj[node] = [n for n in adj[node] if n == other] + [n for n in adj[node] if n != other]
    return adj


def next_hops(spec: TopologySpec, switch: str) -> dict[str, str]:
    """For each host, the neighbour of `switch` on a shortest path to it (BFS, protected first)."""
    adj = neighbours(spec)
    hops: dict[str, str] = {}
    for host in spec.hosts:
        parent = {host: host}
        queue = deque([host])
        while queue:
            node = queue.popleft()
            for nxt in adj[node]:
                if nxt not in parent and (nxt in spec.switches or nxt == host):
                    parent[nxt] = node
                    queue.append(nxt)
        if switch in parent:
            hops[host] = parent[switch]
    return hops
