"""TCP settings of a host as the paper and the authors' scripts use them, applied and read back.

The authors' throughput and FCT scripts (NUS-SNL/linkguardian, switch_impl/expt_scripts) set, on
both servers: SACK on, RACK (tcp_recovery=1) with tail-loss probes (tcp_early_retrans=3),
timestamps off, ECN on for DCTCP and off otherwise, no saved metrics between flows, and
`rto_min 1ms` on the route between them. Each Mininet host is its own network namespace, so
these sysctls and routes are per host.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Protocol


class Host(Protocol):
    """What we need of a Mininet host: run a shell command in its namespace."""

    name: str

    def cmd(self, *args: str) -> str: ...


class HostConfigError(RuntimeError):
    """A setting did not take (the message names the host and the setting)."""


@dataclass(frozen=True)
class HostSettings:
    """The TCP settings of one host."""

    sack: bool = True
    rack: bool = True
    "tcp_recovery=1: RACK loss detection."
    tail_loss_probe: bool = True
    "tcp_early_retrans=3: TLP (and early retransmit)."
    timestamps: bool = False
    ecn: bool = False
    "Negotiate ECN (tcp_ecn=1); DCTCP needs it."
    no_metrics_save: bool = True
    "Do not carry cwnd/RTT estimates from one connection to the next (FCT runs)."
    rto_min_ms: int = 1
    "rto_min on every route of the host (the authors': 1 ms at a ~30 us RTT)."

    def sysctls(self) -> dict[str, int]:
        """net.ipv4 sysctl -> value."""
        return {
            "tcp_sack": int(self.sack),
            "tcp_recovery": int(self.rack),
            "tcp_early_retrans": 3 if self.tail_loss_probe else 0,
            "tcp_timestamps": int(self.timestamps),
            "tcp_ecn": int(self.ecn),
            "tcp_no_metrics_save": int(self.no_metrics_save),
        }


RTO_MIN = re.compile(r"\brto_min (?:lock )?(\d+)ms\b")


def apply(host: Host, settings: HostSettings) -> dict[str, object]:
    """Apply the settings to a host and return what the host reports back (for metadata).

    Raises HostConfigError when a value read back differs from the one written."""
    for key, value in settings.sysctls().items():
        host.cmd(f"sysctl -qw net.ipv4.{key}={value}")
    for route in _routes(host):
        base = RTO_MIN.sub("", route).replace("  ", " ").strip()
        host.cmd(f"ip route replace {base} rto_min {settings.rto_min_ms}ms")
    host.cmd("ip tcp_metrics flush all")
    found = read_back(host)
    routes = found["routes"]
    assert isinstance(routes, list)
    wanted: dict[str, object] = {**settings.sysctls(),
                                 "rto_min_ms": [settings.rto_min_ms] * len(routes)}
    for key, want in wanted.items():
        if found[key] != want:
            raise HostConfigError(f"{host.name}: {key} is {found[key]}, wanted {want}")
    return found


def read_back(host: Host) -> dict[str, object]:
    """The host's TCP sysctls, routes and the rto_min of each route."""
    found: dict[str, object] = {}
    for key in HostSettings().sysctls():
        found[key] = int(host.cmd(f"sysctl -n net.ipv4.{key}").strip())
    routes = _routes(host)
    found["routes"] = routes
    found["rto_min_ms"] = [int(m.group(1)) if (m := RTO_MIN.search(r)) else None
                           for r in routes]
    return found


def _routes(host: Host) -> list[str]:
    return [line.strip() for line in host.cmd("ip route show").splitlines() if line.strip()]


def describe(settings: HostSettings) -> dict[str, object]:
    """The settings as metadata."""
    return asdict(settings)
