"""Forwarding entries: one /32 route per host on every switch, along shortest paths."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import finsy

from lgkit.core.topology import TopologySpec, next_hops


@dataclass(frozen=True)
class RouteSchema:
    """Names of the route table in a program (p4/basic.p4's by default)."""

    table: str = "MyIngress.ipv4_lpm"
    key: str = "hdr.ipv4.dstAddr"
    action: str = "MyIngress.ipv4_forward"
    mac_param: str = "dstAddr"
    port_param: str = "port"

    @classmethod
    def from_p4info(cls, p4info: Path) -> RouteSchema:
        """Find the route table of a program: a table named `*ipv4_lpm` with an action named
        `*ipv4_forward(mac, port)` (p4/basic.p4 and p4/linkguardian.p4 both have one)."""
        schema = finsy.P4Schema(p4info)
        table = next((t for t in schema.tables if t.name.endswith("ipv4_lpm")), None)
        if table is None:
            raise ValueError("no table named *ipv4_lpm")
        action = next((a for a in schema.actions if a.name.endswith("ipv4_forward")), None)
        if action is None:
            raise ValueError("no action named *ipv4_forward")
        if len(action.params) != 2:
            raise ValueError(f"action {action.name} takes {len(action.params)} parameters, "
                             "not (MAC, port)")
        mac, port = [p.name for p in action.params]
        key = next(iter(table.match_fields)).name
        return cls(table.name, key, action.name, mac, port)


def route_entries(spec: TopologySpec, switch: str, port_of: Callable[[str, str], int],
                  schema: RouteSchema | None = None) -> list[finsy.P4TableEntry]:
    """Entries of `switch`: each host's address -> (host MAC, port toward the host)."""
    schema = schema or RouteSchema()
    entries = []
    for host, hop in sorted(next_hops(spec, switch).items()):
        params = {schema.mac_param: spec.host_mac(host), schema.port_param: port_of(switch, hop)}
        entries.append(finsy.P4TableEntry(
            schema.table,
            match=finsy.Match({schema.key: spec.host_ip(host) + "/32"}),
            action=finsy.Action(schema.action, **params),
        ))
    return entries
