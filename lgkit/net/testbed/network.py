"""A running Mininet network of a topology spec, with its switches, wire and counters."""

from __future__ import annotations

import os
import subprocess
from contextlib import ExitStack
from pathlib import Path

from mininet.log import setLogLevel
from mininet.net import Mininet
from mininet.nodelib import LinuxBridge

from lgkit.core.lock import machine_lock
from lgkit.core.naming import node_name
from lgkit.core.targets import DEFAULT_TARGET, target_kind
from lgkit.core.topology import WIRE, TopologySpec, next_hops
from lgkit.net.inject.injectors import WirePorts
from lgkit.net.lifecycle.cleanup import holder_of, kill_processes, processes_in_namespace_of
from lgkit.net.testbed.p4switch import P4Switch
from lgkit.net.testbed.spectopo import SpecTopo

OFFLOADS = ("tso", "gso", "gro", "tx", "rx", "sg")
"Offloads turned off on every interface, so switches see real MTU-sized frames."

PROTECTED_MTU = 1600
"""MTU of the protected link's interfaces: room for the LG header on full-size frames (hosts
keep 1500, so their frames plus LG's 5 bytes fit)."""


class Wire(LinuxBridge):
    """The protected link's middle: a Linux bridge that learns nothing, so it passes every
    frame to the other side (P4 routers may send frames whose source MAC equals the
    destination MAC), and sends no frames of its own (IPv6 off)."""

    port_options = "learning off"
    "bridge_slave options of every port."

    def start(self, controllers) -> None:
        """Create the bridge, then set the port options (learning off) on every port."""
        for name in [self.name] + [i.name for i in self.intfList() if i.name != "lo"]:
            self.cmd(f"sysctl -qw net.ipv6.conf.{name}.disable_ipv6=1")
        super().start(controllers)
        self.cmd("sysctl -qw", f"net.ipv6.conf.{self.name}.disable_ipv6=1")
        for intf in self.intfList():
            if intf.name != "lo":
                self.cmd("ip link set dev", intf.name, "type bridge_slave", self.port_options)


class PlainBridge(Wire):
    """A switch of the spec's `plain` list as a Linux bridge: no learning (the P4 routers'
    frames carry their destination's MAC as source, which would mislead it), no flooding of
    unknown unicast, static forwarding entries instead (`KitNetwork._plain_routes`), and no
    frames of its own (IPv6 off)."""

    port_options = "learning off flood off"


class NameClash(RuntimeError):
    """An interface the network would create exists already."""


class KitNetwork:
    """Build, start and stop the Mininet network of a spec on one target."""

    def __init__(self, spec: TopologySpec, target: str = DEFAULT_TARGET,
                 log_dir: Path | None = None, priority_queues: int = 3,
                 plain_bridges: bool = False) -> None:
        self.kind = target_kind(target)
        self.spec = spec
        self.target = target
        self.bridges = list(spec.plain) if plain_bridges and self.kind.runs_p4 else []
        "Spec switches that run as Linux bridges (PlainBridge) instead of P4 switches."
        self.log_dir = log_dir or Path("/tmp/lgkit-logs")
        self.priority_queues = priority_queues
        self.net: Mininet | None = None
        self._lock: ExitStack | None = None

    def _switch_params(self) -> dict[str, dict]:
        if not self.kind.runs_p4:
            return {}
        return {
            s: {"cls": PlainBridge} if s in self.bridges else
            {"device_id": i + 1, "target": self.target, "log_dir": str(self.log_dir),
             "priority_queues": self.priority_queues}
            for i, s in enumerate(self.spec.switches)
        }

    def start(self) -> Mininet:
        """Create nodes and links, start the switches, set static ARP, turn offloads off."""
        self._lock = ExitStack()
        self._lock.enter_context(machine_lock())
        try:
            return self._start()
        except BaseException:
            self.stop()
            raise

    def _check_names(self) -> None:
        """NameClash if an interface of one of our nodes exists already (Mininet would stop
        half-way with a traceback), naming its holder."""
        nodes = {node_name(n) for n in (*self.spec.hosts, *self.spec.switches, WIRE)}
        for intf in sorted(os.listdir("/sys/class/net")):
            if intf in nodes or intf.partition("-eth")[0] in nodes:
                raise NameClash(f"interface {intf} exists, held by {holder_of(intf)}")

    def _start(self) -> Mininet:
        setLogLevel("error")
        self._check_names()
        switch_cls = P4Switch if self.kind.runs_p4 else LinuxBridge
        topo = SpecTopo(self.spec, switch_params=self._switch_params(),
                        wire_cls=Wire)
        self.net = Mininet(topo=topo, switch=switch_cls, controller=None, build=False,
                           autoSetMacs=False, waitConnected=False)
        self.net.build()
        for node in self.net.hosts + self.net.switches:
            for intf in node.intfList():
                if intf.name != "lo":
                    node.cmd("ethtool -K", intf.name, *[f"{o} off" for o in OFFLOADS])
        for host in self.net.hosts:
            host.cmd("sysctl -qw net.ipv6.conf.all.disable_ipv6=1")
        self._widen_protected_link()
        self.net.start()
        for switch in self.p4_switches():
            switch.wait_ready()
        self.net.staticArp()
        self._plain_routes()
        return self.net

    def _plain_routes(self) -> None:
        """Static forwarding entries of the bridges: each host's MAC -> the port toward it."""
        for switch in self.bridges:
            for host, hop in next_hops(self.spec, switch).items():
                iface = self.node(switch).connectionsTo(self.node(hop))[0][0].name
                subprocess.run(["bridge", "fdb", "replace", self.spec.host_mac(host), "dev",
                                iface, "master", "static"], check=True, capture_output=True)

    def _widen_protected_link(self) -> None:
        assert self.net is not None
        wire = self.net.get(node_name(WIRE))
        names = [i.name for i in wire.intfList() if i.name != "lo"]
        names += [self.interface(a, b) for a, b in (self.spec.protected,
                                                     self.spec.protected[::-1])]
        for name in names:
            subprocess.run(["ip", "link", "set", "dev", name, "mtu", str(PROTECTED_MTU)],
                           check=True, capture_output=True)

    def p4_switch_names(self) -> list[str]:
        """Spec names of the switches that run P4 (none on lxbr)."""
        if not self.kind.runs_p4:
            return []
        return [s for s in self.spec.switches if s not in self.bridges]

    def p4_switches(self) -> list[P4Switch]:
        """The P4 switch nodes (none on lxbr)."""
        assert self.net is not None, "network not started"
        return [s for s in self.net.switches if isinstance(s, P4Switch)]

    def stop(self) -> None:
        """Stop switches and hosts and delete the interfaces."""
        try:
            if self.net is not None:
                net, self.net = self.net, None
                for host in net.hosts:
                    kill_processes(processes_in_namespace_of(host.shell.pid) - {host.shell.pid})
                net.stop()
        finally:
            if self._lock is not None:
                self._lock.close()
                self._lock = None

    def node(self, name: str):
        """The Mininet node of a spec name (`h1` -> lgh1)."""
        assert self.net is not None, "network not started"
        return self.net.get(node_name(name))

    def interface(self, switch: str, neighbour: str) -> str:
        """Name of the switch's interface facing neighbour (through the wire if protected)."""
        sw = self.node(switch)
        other = self.node(neighbour)
        if set(self.spec.protected) == {switch, neighbour}:
            other = self.node(WIRE)
        links = sw.connectionsTo(other)
        if not links:
            raise KeyError(f"{switch} has no link to {neighbour}")
        return links[0][0].name

    def port(self, switch: str, neighbour: str) -> int:
        """Switch port number facing neighbour."""
        sw = self.node(switch)
        return sw.ports[sw.intf(self.interface(switch, neighbour))]

    def wire_ingress(self) -> str:
        """The wire's port that receives from the protected link's sender."""
        sender, _ = self.spec.protected
        return self.node(WIRE).connectionsTo(self.node(sender))[0][0].name

    def wire_ports(self) -> WirePorts:
        """Both wire ports of the protected link (where the injectors work)."""
        _, receiver = self.spec.protected
        toward = self.node(WIRE).connectionsTo(self.node(receiver))[0][0].name
        return WirePorts(self.wire_ingress(), toward)

    def counter(self, point: str) -> int:
        """Packets counted at measurement point A-D (interface statistics, any target)."""
        switch, neighbour, direction = self.spec.points[point]
        iface = self.interface(switch, neighbour)
        return interface_packets(iface, "rx" if direction == "rx" else "tx")


def interface_packets(iface: str, direction: str) -> int:
    """rx or tx packet count of a root-namespace interface."""
    return int(Path(f"/sys/class/net/{iface}/statistics/{direction}_packets").read_text())
