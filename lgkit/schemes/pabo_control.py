"""PABO's control plane: the bounce probability of the paper's Eq. 4 as a threshold table, the
settings (theta, lambda and queue sizes at run time), routes and port roles (p4/pabo.p4)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from lgkit.core.topology import TopologySpec
from lgkit.schemes.entries import Write
from lgkit.schemes.fabric import PortOf, ip_value, mac_value, switch_routes
from lgkit.sw.exec.interp.tables import Exact, Lpm

ROWS = 16
"Bounce counts with their own threshold row (p4/pabo.p4 MAX_COUNT_ROW + 1)."
MAX_THRESHOLD = 2**32 - 1
BOUNCE_PRIORITY = 7
"The highest of 8 priority queues (switches run with --priority-queues 8)."


@dataclass(frozen=True)
class PaboParams:
    """PABO's knobs (paper §II-C and §V)."""

    theta: float = 0.8
    "Queue utilization below which nothing is bounced."
    lam: float = 50.0
    "Exponential decay constant lambda."
    capacity: int = 500
    "Normal queue, packets."
    bounce_capacity: int = 500
    "Bounce queue, packets."
    max_bounces: int = 15
    "Loop bound: bounces per packet at most (1..255)."

    def __post_init__(self) -> None:
        if not 0.0 <= self.theta < 1.0:
            raise ValueError("theta must be in [0, 1)")
        if self.lam <= 0:
            raise ValueError("lambda must be > 0")
        if not (0 < self.capacity < 2**16 and 0 < self.bounce_capacity < 2**16):
            raise ValueError("queue capacities must be in 1..65535 packets")
        if not 1 <= self.max_bounces <= 255:
            raise ValueError("max_bounces must be in 1..255")


def bounce_probability(u: float, n: int, theta: float, lam: float) -> float:
    """Eq. 4: P(u_q, n_p), 0 up to theta, then rising super-linearly to 1 at a full queue;
    each bounce already taken (n) flattens the curve."""
    if u <= theta:
        return 0.0
    if u >= 1.0:
        return 1.0
    k = lam / (n + 1)
    return math.expm1(k * (theta - u)) / math.expm1(k * (theta - 1.0))


def threshold(probability: float) -> int:
    """The 32-bit number a random draw in [0, 2^32 - 2] is compared against."""
    return min(MAX_THRESHOLD, max(0, round(probability * MAX_THRESHOLD)))


def threshold_writes(params: PaboParams) -> list[Write]:
    """bounce_threshold entries: for every bounce-count row and queue length (packets) below a
    full queue whose probability is above 0. Row 0 is a never-bounced packet in the normal
    queue; rows 1.. are bounced packets, which join the bounce queue. The utilization is that
    of the queue the packet would join (docs/pabo.md)."""
    writes = []
    for row in range(min(ROWS, params.max_bounces)):
        capacity = params.capacity if row == 0 else params.bounce_capacity
        for occupancy in range(capacity):
            value = threshold(bounce_probability(occupancy / capacity, row, params.theta,
                                                 params.lam))
            if value:
                writes.append(Write("PaboIngress.bounce_threshold",
                                    "PaboIngress.set_threshold", {"threshold": value},
                                    {"meta.row": Exact(row), "meta.occupancy": Exact(occupancy)}))
    return writes


def settings_write(params: PaboParams, enabled: bool, hash_seed: int = 0) -> Write:
    """The settings default action. Off: drop-tail at capacity + bounce_capacity (the paper's
    baseline doubles the normal queue)."""
    capacity = params.capacity if enabled else params.capacity + params.bounce_capacity
    return Write("PaboIngress.settings", "PaboIngress.configure", {
        "enabled": int(enabled), "capacity": capacity,
        "bounce_capacity": params.bounce_capacity, "max_bounces": params.max_bounces,
        "bounce_priority": BOUNCE_PRIORITY, "hash_seed": hash_seed & 0xFFFF})


def topology_writes(spec: TopologySpec, switch: str, port_of: PortOf) -> list[Write]:
    """Routes (ECMP candidates per host), the upstream port toward each host as a source (its
    first candidate), and the host ports in ingress and egress."""
    routes = switch_routes(spec, switch, port_of)
    writes = []
    for host, ports in sorted(routes.candidates.items()):
        padded = (ports + [0, 0, 0, 0])[:4]
        address = Lpm(ip_value(spec.host_ip(host)), 32)
        writes.append(Write("PaboIngress.routes", "PaboIngress.set_candidates", {
            "dmac": mac_value(spec.host_mac(host)), "count": min(len(ports), 4),
            "p0": padded[0], "p1": padded[1], "p2": padded[2], "p3": padded[3]},
            {"hdr.ipv4.dst_addr": address}))
        writes.append(Write("PaboIngress.upstream", "PaboIngress.set_upstream", {
            "port": ports[0], "host": int(ports[0] in routes.host_ports)},
            {"hdr.ipv4.src_addr": address}))
    for port in routes.host_ports:
        writes.append(Write("PaboIngress.host_ports", "PaboIngress.host_port", {},
                            {"standard_metadata.ingress_port": Exact(port)}))
        writes.append(Write("PaboEgress.host_ports", "PaboEgress.host_port", {},
                            {"standard_metadata.egress_port": Exact(port)}))
    return writes


def switch_writes(spec: TopologySpec, switch: str, port_of: PortOf, params: PaboParams,
                  enabled: bool, hash_seed: int = 0) -> list[Write]:
    """Everything one PABO switch needs."""
    return ([settings_write(params, enabled, hash_seed)] + topology_writes(spec, switch, port_of)
            + (threshold_writes(params) if enabled else []))
