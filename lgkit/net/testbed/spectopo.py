"""A topology spec as a Mininet topology: hosts, switches, links, the wire on the protected link."""

from __future__ import annotations

from mininet.topo import Topo

from lgkit.core.naming import node_name
from lgkit.core.topology import WIRE, TopologySpec


class SpecTopo(Topo):
    """Mininet topology of a spec; node names get the kit prefix."""

    def build(self, spec: TopologySpec, switch_params: dict[str, dict] | None = None,
              wire_cls: type | None = None) -> None:  # noqa: D401 (Mininet's hook)
        """Add hosts, switches and links; the protected link goes through the wire bridge."""
        params = switch_params or {}
        for host in spec.hosts:
            self.addHost(node_name(host), ip=spec.host_ip(host) + "/24", mac=spec.host_mac(host))
        for index, switch in enumerate(spec.switches, start=1):
            self.addSwitch(node_name(switch), dpid=f"{index:016x}", **params.get(switch, {}))
        a, b = spec.protected
        for x, y in spec.links:
            if {x, y} == {a, b}:
                self.addSwitch(node_name(WIRE), cls=wire_cls, dpid=f"{0xFFFF:016x}")
                self.addLink(node_name(a), node_name(WIRE))
                self.addLink(node_name(WIRE), node_name(b))
            else:
                self.addLink(node_name(x), node_name(y))
