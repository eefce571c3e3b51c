"""A started topology with its control plane: switches programmed, routes and link rates set."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from lgkit.control.build import BuildError, BuiltProgram, build_program
from lgkit.control.forwarding import RouteSchema, route_entries
from lgkit.control.session import P4RuntimeSession
from lgkit.core.targets import target_kind
from lgkit.core.topology import TopologySpec
from lgkit.measure.loss import PointCounts, snapshot
from lgkit.net.inject.injectors import Injector, LGSender, LinkAccess
from lgkit.net.inject.registry import make_injector
from lgkit.net.spec.programs import LG_PROGRAMS
from lgkit.net.testbed.network import KitNetwork
from lgkit.net.testbed.p4switch import P4Switch
from lgkit.sw.switch.loss import LossModel

REPO = Path(__file__).resolve().parents[3]
BASIC_PROGRAM = REPO / "p4" / "basic.p4"
LG_PROGRAM = LG_PROGRAMS["v1model"]
TNA_PROGRAM = LG_PROGRAMS["tofino"]
FRAME_BITS = 1514 * 8
"A full-size Ethernet frame (1500-byte payload and header, no FCS)."

PIPELINE_DROPS = ("ingress_drop", "egress_drop")
"""`show_drops` causes the P4 program decided (LinkGuardian drops acknowledged Tx copies, spare
retransmitted copies and dummies by design); every other cause lost a packet outside it."""

HOST_SHARE = 0.95
"""Hosts send at this share of the link rate (tbf on their interface), so the bottleneck is
the sender's own queue, as with the paper's line-rate NICs: TCP then loses nothing in switch
queues, and the protected link keeps headroom for LG's retransmissions and header."""

Log = Callable[[str], None]


class Testbed:
    """The testbed every experiment runs on: KitNetwork + P4Runtime sessions + routes + port
    rates + the corruption injector, started and stopped as one."""

    __test__ = False  # not a pytest class

    def __init__(self, spec: TopologySpec, target: str, work_dir: Path,
                 program: Path = BASIC_PROGRAM, rate_mbps: float | None = None,
                 log: Log = print, plain_bridges: bool = False, priority_queues: int = 3,
                 routes: bool = True, injector: str = "auto",
                 programs: Mapping[str, Path] | None = None) -> None:
        """`routes`: install the kit's /32 routes (programs with an `*ipv4_lpm` table); a
        program with other tables gets its entries from the caller, through `sessions`.
        `injector`: a name of the injector registry (or auto), used by `corrupt`.
        `programs`: switch -> its program, where it is not `program`."""
        self.spec, self.target, self.work_dir, self.program = spec, target, work_dir, program
        self.programs = dict(programs or {})
        self.kind = target_kind(target)
        self.rate_mbps = rate_mbps if rate_mbps is not None else self.kind.link_rate_mbps
        self.log = log
        self.routes = routes
        self.network = KitNetwork(spec, target, log_dir=work_dir / "logs",
                                  priority_queues=priority_queues, plain_bridges=plain_bridges)
        self.sessions: dict[str, P4RuntimeSession] = {}
        self.built: dict[Path, BuiltProgram] = {}
        "Each program the switches run, built."
        self.injector_choice = injector
        self.injector: Injector | None = None
        "The injector corrupting the protected link now, if any."
        self.unseen_drops: Callable[[], int] | None = None
        """Frames dropped inside the LG sender after point B (the in-P4 dropper's counter),
        kept after the injector stops: they stay counted at B."""
        self._said: set[str] = set()

    @property
    def is_p4(self) -> bool:
        """True unless the switches are plain Linux bridges."""
        return self.kind.runs_p4

    def program_of(self, switch: str) -> Path:
        """The program `switch` runs."""
        return self.programs.get(switch, self.program)

    def start(self) -> Testbed:
        """Build the programs, start the network, push pipelines, routes and rates."""
        if self.is_p4:
            sources = dict.fromkeys([self.program, *self.programs.values()])
            for i, source in enumerate(sources):  # two programs may share a file name
                out = self.work_dir / "build" / (str(i) if i else "")
                self.built[source] = build_program(source, self.target, out)
        # each program's route table before the network: a wrong program builds nothing
        routes = {source: self._route_schema(source) for source in self.built}
        self.network.start()
        if not self.built:  # no P4 (plain Linux bridges)
            return self
        for switch in self.network.p4_switch_names():
            node: P4Switch = self.network.node(switch)
            source = self.program_of(switch)
            built = self.built[source]
            session = P4RuntimeSession(switch, node.grpc_address, node.device_id,
                                       built.p4info, built.config)
            self.sessions[switch] = session.open()
            if routes[source] is not None:
                session.insert(route_entries(self.spec, switch, self.network.port,
                                             routes[source]))
        self.set_rate(self.p4_rate_mbps())
        return self

    def _route_schema(self, source: Path) -> RouteSchema | None:
        """A program's route table, when the testbed installs routes (BuildError if none)."""
        if not self.routes:
            return None
        try:
            return RouteSchema.from_p4info(self.built[source].p4info)
        except ValueError as exc:
            raise BuildError(f"program {source}: {exc}, where the testbed installs its "
                             "routes") from None

    def p4_rate_mbps(self) -> float:
        """The switch ports' rate (every P4 target kind has one; Linux bridges have none)."""
        if self.rate_mbps is None:
            raise ValueError(f"target {self.target}: no link rate")
        return self.rate_mbps

    def set_rate(self, rate_mbps: float) -> None:
        """Cap every switch port at rate_mbps and the hosts at HOST_SHARE of it (also while
        running: the rate finder changes it between flows)."""
        self.rate_mbps = rate_mbps
        paper = self.spec.paper_link_gbps * 1000
        self.log(f"link rate: {self.rate_mbps:g} Mb/s on every switch port "
                 f"(paper {paper / 1000:g} Gb/s, scale 1/{paper / self.rate_mbps:.0f})")
        for switch in self.network.p4_switch_names():
            node: P4Switch = self.network.node(switch)
            node.switch_cli(self.kind.port_commands([p for p, _ in node.port_map()],
                                                    self.rate_mbps))
        host_mbps = self.rate_mbps * HOST_SHARE
        for host in self.spec.hosts:
            node = self.network.node(host)
            node.cmd(f"tc qdisc replace dev {node.defaultIntf().name} root tbf "
                     f"rate {host_mbps:.3f}mbit burst 16kb latency 100ms")

    def link_access(self) -> LinkAccess:
        """Where injectors can drop: the wire's ports, and the LG sender's port when the LG
        program runs on a P4 target."""
        lg_sender = None
        sender, receiver = self.spec.protected
        if self.is_p4 and self.program_of(sender) == LG_PROGRAM:
            lg_sender = LGSender(sender, self.network.port(sender, receiver),
                                 self.sessions[sender])
        return LinkAccess(self.network.wire_ports(), frames_per_s(self.rate_mbps), lg_sender)

    def corrupt(self, model: LossModel, choice: str | None = None,
                log: Log | None = None) -> Injector:
        """Corrupt the protected link with `model` from now on, with the injector `choice`
        (default: the testbed's); replaces the injector in use. Each distinct line about the
        choice is logged once per testbed."""
        self.stop_corruption()
        say = log or self._say
        self.injector = make_injector(choice or self.injector_choice, self.link_access(),
                                      model, say)
        self.unseen_drops = self.injector.unseen_drops
        self.injector.start()
        return self.injector

    def _say(self, line: str) -> None:
        if line not in self._said:
            self._said.add(line)
            self.log(line)

    def stop_corruption(self) -> None:
        """Stop the injector in use, if any (its rules removed)."""
        if self.injector is not None:
            self.injector.stop()
            self.injector = None

    def counts(self) -> PointCounts:
        """Counters at A-D now (B includes frames the in-P4 dropper took off the link)."""
        counts = snapshot(self.network.counter)
        if self.unseen_drops is None:
            return counts
        return dataclasses.replace(counts, b=counts.b + self.unseen_drops())

    def drop_counts(self) -> dict[tuple[str, str], int]:
        """(switch, cause) -> packets the switch dropped so far (built-in target only: BMv2's
        runtime CLI has no drop report)."""
        if not self.kind.reports_drops:
            return {}
        counts = {}
        for switch in self.network.p4_switch_names():
            for line in self.network.node(switch).switch_cli(["show_drops"]).splitlines():
                cause, _, value = line.partition(":")
                if value.strip().isdigit():
                    counts[(switch, cause.strip())] = int(value)
        return counts

    def drops_outside_p4(self, before: dict[tuple[str, str], int]) -> dict[tuple[str, str], int]:
        """(switch, cause) -> packets lost outside the P4 programs since `before` (a
        `drop_counts`): a traffic manager's tail drops by queue (`queue_full port P prio Q`,
        not the switch's total), socket overflows, failed sends, ... (built-in target only)."""
        gained = {key: count - before.get(key, 0) for key, count in self.drop_counts().items()
                  if key[1] not in (*PIPELINE_DROPS, "queue_full")}
        return {key: count for key, count in gained.items() if count > 0}

    def stop(self) -> None:
        """Stop the injector, close sessions and stop the network (safe to call twice; the
        network stops even if the injector or a session fails to)."""
        try:
            self.stop_corruption()
        finally:
            for session in self.sessions.values():
                try:
                    session.close()
                except Exception as exc:  # noqa: BLE001 (closing must go on for the others)
                    print(f"warning: closing {session.name}: {exc}", file=sys.stderr)
            self.sessions.clear()
            self.network.stop()


def frames_per_s(rate_mbps: float | None) -> float:
    """Full-size frames per second at a link rate (None, Linux bridges: 100 Mb/s)."""
    return (rate_mbps or 100.0) * 1e6 / FRAME_BITS
