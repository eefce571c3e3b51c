"""Vertigo's control plane: the scheme a switch runs (Vertigo, ECMP, DRILL, DIBS: run-time
settings of p4/vertigo.p4), its buffer, the rank bands, routes and deflection ports."""

from __future__ import annotations

from dataclasses import dataclass

from lgkit.core.topology import TopologySpec
from lgkit.schemes.entries import Write
from lgkit.schemes.fabric import PortOf, ip_value, mac_value, switch_routes
from lgkit.sw.exec.interp.tables import Lpm, Range

FORWARD = {"ecmp": 0, "p2c": 1, "drill": 2}
DEFLECT = {"none": 0, "random": 1, "p2c": 2}
MAX_CANDIDATES = 4
MAX_DEFLECT_PORTS = 8
RANK_LIMIT = 2**32 - 1


@dataclass(frozen=True)
class Scheme:
    """How a switch forwards, deflects and schedules."""

    name: str
    forward: str
    deflect: str
    ranked: bool


SCHEMES = {
    "ecmp": Scheme("ecmp", "ecmp", "none", False),
    "drill": Scheme("drill", "drill", "none", False),
    "dibs": Scheme("dibs", "ecmp", "random", False),
    "vertigo": Scheme("vertigo", "p2c", "p2c", True),
}
"""The paper's comparison (§4.1): ECMP, DRILL (micro load balancing), DIBS (random
deflection), and Vertigo."""

DEFAULT_BANDS = (1_500, 6_000, 24_000, 100_000, 400_000, 1_600_000, 6_400_000)
"""Upper rank (remaining bytes) of bands 7 (served first) down to 1; larger ranks go to band 0.
Roughly x4 apart: one packet, a few, a short RPC, ... up to megabytes."""


@dataclass(frozen=True)
class Buffer:
    """A switch port's buffer as P4 admits packets into it."""

    capacity: int = 100
    "Packets per port: beyond, a packet is deflected or dropped."
    headroom: int = 20
    "Extra places for the push-out approximation (ranked schemes only)."

    def tm_depth(self) -> int:
        """Traffic-manager depth per (port, priority) queue: every admitted packet fits, so
        the TM never drops behind P4's back and the estimates stay exact."""
        return self.capacity + self.headroom + 8


def settings_write(scheme: Scheme, buffer: Buffer, hash_seed: int = 0) -> Write:
    """The settings default action of one switch."""
    return Write("VertigoIngress.settings", "VertigoIngress.configure", {
        "forward": FORWARD[scheme.forward], "deflect": DEFLECT[scheme.deflect],
        "ranked": int(scheme.ranked), "capacity": buffer.capacity,
        "headroom": buffer.headroom if scheme.ranked else 0, "hash_seed": hash_seed & 0xFFFF})


def band_writes(bounds: tuple[int, ...] = DEFAULT_BANDS) -> list[Write]:
    """rank_band entries: rank ranges to bands 7, 6, ... (the smallest ranks highest)."""
    if not 0 < len(bounds) < 8 or list(bounds) != sorted(set(bounds)):
        raise ValueError("1 to 7 increasing band bounds")
    writes, low = [], 0
    for index, high in enumerate((*bounds, RANK_LIMIT)):
        band = 7 - index if high != RANK_LIMIT else 0
        writes.append(Write("VertigoIngress.rank_band", "VertigoIngress.set_band",
                            {"band": band}, {"meta.rank": Range(low, high)}, priority=1))
        low = high + 1
    return writes


def topology_writes(spec: TopologySpec, switch: str, port_of: PortOf) -> list[Write]:
    """Routes (up to 4 candidates per host, one DRILL memory group per host) and the deflection
    ports (every port facing a switch, up to 8)."""
    routes = switch_routes(spec, switch, port_of)
    writes = []
    for group, host in enumerate(sorted(routes.candidates)):
        ports = routes.candidates[host][:MAX_CANDIDATES]
        padded = ports + [0] * (MAX_CANDIDATES - len(ports))
        writes.append(Write("VertigoIngress.routes", "VertigoIngress.set_candidates", {
            "dmac": mac_value(spec.host_mac(host)), "group": group, "count": len(ports),
            "p0": padded[0], "p1": padded[1], "p2": padded[2], "p3": padded[3]},
            {"hdr.ipv4.dst_addr": Lpm(ip_value(spec.host_ip(host)), 32)}))
    deflect = routes.switch_ports[:MAX_DEFLECT_PORTS]
    padded = deflect + [0] * (MAX_DEFLECT_PORTS - len(deflect))
    writes.append(Write("VertigoIngress.deflect_ports", "VertigoIngress.set_deflect_ports",
                        {"count": len(deflect), **{f"p{i}": p for i, p in enumerate(padded)}}))
    return writes


def switch_writes(spec: TopologySpec, switch: str, port_of: PortOf, scheme: Scheme,
                  buffer: Buffer, hash_seed: int = 0) -> list[Write]:
    """Everything one switch needs to run `scheme`."""
    return ([settings_write(scheme, buffer, hash_seed)] + topology_writes(spec, switch, port_of)
            + band_writes())
