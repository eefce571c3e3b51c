"""The leaf-spine testbed of the Vertigo experiments (Mininet): every switch runs p4/vertigo.p4,
the scheme (ECMP, DRILL, DIBS, Vertigo) is a run-time setting, hosts run the kit's FCT servers
and, for Vertigo, the host agent (marking and ordering).

Scale: host links at the target's link rate, links between switches 4x faster (the paper's 10G
hosts and 40G fabric); buffers in packets, small enough that an incast of `FANIN` replies
overflows a host port as the paper's 100-way incast overflows 300 KB.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lgkit.core import naming
from lgkit.core.child import stop_process
from lgkit.core.targets import DEFAULT_TARGET
from lgkit.core.topology import load_spec
from lgkit.measure.p4poll import Cell, cli_registers, read_cells
from lgkit.net.testbed.testbed import Testbed
from lgkit.schemes import vertigo_cagent
from lgkit.schemes.entries import to_session
from lgkit.schemes.fabric import switch_routes
from lgkit.schemes.vertigo_control import (
    SCHEMES,
    Buffer,
    Scheme,
    band_writes,
    settings_write,
    topology_writes,
)
from lgkit.workloads import hostconfig
from lgkit.workloads.hostconfig import RTO_MIN, Host, HostConfigError, HostSettings

P4 = Path(__file__).resolve().parents[2] / "p4" / "vertigo.p4"
FABRIC_FACTOR = 4
"Links between switches run this many times faster than links to hosts."
ADVMSS = 1500 - 20 - 20 - 12
"""TCP segments small enough for a 12-byte option on 1500-byte links: every host advertises
this MSS on its routes (a smaller device MTU would not do: the kernel checks the MTU after the
NFQUEUE rule added the option, and drops the packet)."""
FLOW_PORT = 5300
"FCT server port of background flows (plain 4-byte answers)."
QUERY_PORT = 5301
"FCT server port of incast queries (framed replies)."
DEFAULT_BUFFER = Buffer(32, 16)
"Packets per port (and push-out headroom)."
COUNTERS = ("vertigo_forwarded", "vertigo_deflected", "vertigo_full_drops", "vertigo_pushout",
            "vertigo_ttl_drops")

Log = Callable[[str], None]


@dataclass(frozen=True)
class HostProcess:
    """A process started in a host (recorded for `lgkit clean`)."""

    host: str
    kind: str
    process: subprocess.Popen

    def stop(self) -> None:
        stop_process(self.process, 10.0, naming.pid_file(self.kind, self.host))


ADVMSS_METRIC = re.compile(r"\badvmss (?:lock )?\d+")


ROUTE_STATES = frozenset({"linkdown", "dead"})
"Words `ip route show` prints about a route's state, not arguments `ip route` takes."


def with_advmss(route: str) -> str:
    """An `ip route show` line as `ip route replace` arguments that advertise ADVMSS (`ip`
    prints a locked metric as `rto_min lock 200ms` but accepts only `rto_min 200ms` back)."""
    base = RTO_MIN.sub(lambda m: f"rto_min {m.group(1)}ms", ADVMSS_METRIC.sub("", route))
    return " ".join([*(w for w in base.split() if w not in ROUTE_STATES), "advmss",
                     str(ADVMSS)])


def reserve_option_room(host: Host) -> None:
    """Every route of a host advertises ADVMSS; raises HostConfigError if one does not."""
    for route in _routes(host):
        host.cmd(f"ip route replace {with_advmss(route)}")
    missing = [r for r in _routes(host) if f"advmss {ADVMSS}" not in r]
    if missing:
        raise HostConfigError(f"{host.name}: routes without advmss {ADVMSS}: {missing}")


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a live process so far (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tree_cpu_seconds(pid: int) -> float:
    """cpu_seconds of a process and its live descendants (the Python wrapper of a host agent
    and the C agent it runs)."""
    total = cpu_seconds(pid)
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            children = task.read_text().split()
        except OSError:
            continue
        total += sum(tree_cpu_seconds(int(child)) for child in children)
    return total


def machine_cpu() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot, over all cores."""
    ticks = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = ticks[3] + ticks[4]  # idle and iowait
    hz = os.sysconf("SC_CLK_TCK")
    return (sum(ticks) - idle) / hz, sum(ticks) / hz


def _routes(host: Host) -> list[str]:
    return [line.strip() for line in host.cmd("ip -4 route show").splitlines() if line.strip()]


class VertigoBed(Testbed):
    """The testbed with the Vertigo program on leafspine16: start once, switch schemes at run
    time, stop."""

    def __init__(self, work_dir: Path, target: str = DEFAULT_TARGET, rate_mbps: float | None = None,
                 buffer: Buffer = DEFAULT_BUFFER, spec: str = "leafspine16",
                 log: Log = print) -> None:
        super().__init__(load_spec(spec), target, work_dir, program=P4, rate_mbps=rate_mbps,
                         log=log, priority_queues=8, routes=False)
        self.buffer = buffer
        self.servers: list[HostProcess] = []
        self.agents: list[HostProcess] = []
        self.scheme: Scheme | None = None

    def host(self, name: str) -> Any:
        return self.network.node(name)

    def ip(self, name: str) -> str:
        return self.spec.host_ip(name)

    def start(self, host_settings: HostSettings | None = None) -> VertigoBed:
        """Network, tables, rates, host settings (default: the kit's) and FCT servers."""
        super().start()
        assert self.rate_mbps is not None, "a P4 target sets the link rate"
        host_settings = host_settings or HostSettings()
        for index, switch in enumerate(self.spec.switches):
            session = self.sessions[switch]
            to_session(session, topology_writes(self.spec, switch, self.network.port)
                       + band_writes())
            fabric = switch_routes(self.spec, switch, self.network.port).switch_ports
            self.host_cli(switch, self.kind.port_commands(fabric,
                                                          self.rate_mbps * FABRIC_FACTOR))
            to_session(session, [settings_write(SCHEMES["ecmp"], self.buffer, index)])
        for name in self.spec.hosts:
            node = self.host(name)
            hostconfig.apply(node, host_settings)
            reserve_option_room(node)
        for name in self.spec.hosts:
            for port in (FLOW_PORT, QUERY_PORT):
                self.servers.append(self._start(name, f"fct{port}", [
                    sys.executable, "-m", "lgkit.workloads.fct", "server", "--port", str(port)],
                    "listening"))
        return self

    def host_cli(self, switch: str, commands: list[str]) -> str:
        """Runtime-CLI commands on one switch."""
        return self.network.node(switch).switch_cli(commands)

    def _start(self, host: str, kind: str, argv: list[str], ready: str) -> HostProcess:
        process = self.host(host).popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True)
        naming.write_pid(kind, host, process.pid)
        line = process.stdout.readline()
        if ready not in line:
            raise RuntimeError(f"{kind} on {host} did not start: {process.stderr.read()[-300:]}")
        return HostProcess(host, kind, process)

    def agent_engine(self, engine: str) -> str:
        """`c` or `python`: auto is C when it builds (once, here, not in every host), else
        Python, said in one line."""
        if engine == "python":
            return engine
        path, why = vertigo_cagent.build()
        if path is not None:
            return "c"
        if engine == "c":
            raise HostConfigError(f"the C host agent cannot be built: {why}")
        self.log(f"vertigo host agents: C agent unavailable ({why}); running the Python agent")
        return "python"

    def use(self, scheme: str, tau_us: float, engine: str = "auto") -> None:
        """Every switch to `scheme`; the host agents run for Vertigo only."""
        self.scheme = SCHEMES[scheme]
        for index, switch in enumerate(self.spec.switches):
            to_session(self.sessions[switch],
                       [settings_write(self.scheme, self.buffer, index)])
        self.stop_agents()
        if scheme == "vertigo":
            engine = self.agent_engine(engine)
            for name in self.spec.hosts:
                self.agents.append(self._start(name, "vertigo", [
                    sys.executable, "-m", "lgkit.schemes.vertigo_host", "--dev",
                    self.host(name).defaultIntf().name, "--framed-ports",
                    f"{FLOW_PORT},{QUERY_PORT}", "--framed-source-ports", str(QUERY_PORT),
                    "--tau-us", str(tau_us), "--engine", engine, "--stats",
                    str(self.work_dir / f"vertigo-agent-{name}.json")], "ready"))

    def stop_agents(self) -> dict[str, Any]:
        """Stop the host agents; returns their final counters per host."""
        stats = {}
        for agent in self.agents:
            agent.stop()
            path = self.work_dir / f"vertigo-agent-{agent.host}.json"
            if path.exists():
                stats[agent.host] = json.loads(path.read_text())
        self.agents.clear()
        return stats

    def counters(self) -> dict[str, int]:
        """The program's counters summed over every switch and port."""
        totals = dict.fromkeys(COUNTERS, 0)
        for switch in self.spec.switches:
            ports = [p for p, _ in self.network.node(switch).port_map()]
            cells = [Cell(switch, "counter", name, port) for name in COUNTERS for port in ports]
            for cell, value in read_cells(self.sessions[switch].read, cells).items():
                totals[cell.name] += value["packets"]
        return totals

    def estimates(self) -> int:
        """The program's queue-length estimates (vertigo_qlen) summed over every switch and
        port: 0 once the fabric has drained, unless they lost updates."""
        total = 0
        for switch in self.spec.switches:
            node = self.network.node(switch)
            cells = [Cell(switch, "register", "vertigo_qlen", port)
                     for port, _ in node.port_map()]
            values = cli_registers(node.switch_cli, cells)
            total += sum(value["value"] for value in values.values())
        return total

    def cpu(self) -> dict[str, float]:
        """CPU seconds so far: the software switches', the host agents', and the machine's busy
        and total (all cores; the switches, agents and workloads share them with whatever
        else runs)."""
        switches = [self.network.node(s).process for s in self.spec.switches]
        busy, total = machine_cpu()
        return {"switches": sum(cpu_seconds(p.pid) for p in switches if p is not None),
                "agents": sum(tree_cpu_seconds(a.process.pid) for a in self.agents),
                "busy": busy, "total": total}

    def switch_drops(self) -> dict[str, int]:
        """Packets the switches dropped outside P4, by cause, summed over every switch:
        `queue_full` (the traffic managers; 0 while P4's estimates are exact) and
        `rx_socket_overflow` (the kernel, when a software switch falls so far behind that a
        port's receive buffer fills: the CPU cannot carry the load)."""
        totals = dict.fromkeys(("queue_full", "rx_socket_overflow"), 0)
        for (_, cause), n in self.drop_counts().items():
            totals[cause] = totals.get(cause, 0) + n
        return totals

    def stop(self) -> None:
        """Agents, servers, network."""
        try:
            self.stop_agents()
            for server in self.servers:
                server.stop()
            self.servers.clear()
        finally:
            super().stop()

    def wait_quiet(self, seconds: float = 2.0) -> None:
        """Let queues drain between two runs."""
        time.sleep(seconds)
