"""Port rates: `--port-rate` values, and the rate a tc qdisc (a Mininet TCLink) shapes a link to.

A switch that sends faster than its link is shaped lets the kernel's qdisc hold the backlog,
where P4 never sees it; following the link's rate keeps the queue in the traffic manager, so
`enq_qdepth`/`deq_qdepth` grow and ECN marking works as on BMv2 behind a shaped link.
"""

from __future__ import annotations

import re
import shutil
import subprocess

UNITS = {"": 1, "bit": 1, "k": 1e3, "kbit": 1e3, "m": 1e6, "mbit": 1e6, "g": 1e9, "gbit": 1e9,
         "bps": 8, "kbps": 8e3, "mbps": 8e6, "gbps": 8e9}
TC_RATE = re.compile(r"\brate (\d+(?:\.\d+)?)([KMG]?)(bit|bps)\b")
TC_UNITS = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}


def parse_rate(text: str) -> float:
    """Bits/s from '10M', '512k', '1e7', '100mbit' (tc's bps means bytes/s); ValueError if bad."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d*)?(?:e\d+)?)\s*([a-zA-Z]*)\s*", text)
    if not match or match.group(2).lower() not in UNITS:
        raise ValueError(f"bad rate {text!r} (examples: 10M, 512k, 1e9, 100mbit)")
    return float(match.group(1)) * UNITS[match.group(2).lower()]


def parse_port_rates(values: list[str]) -> tuple[float | None, dict[int, float]]:
    """`--port-rate RATE` (every port) and `--port-rate PORT:RATE` values; ValueError if bad."""
    every: float | None = None
    per_port: dict[int, float] = {}
    for value in values:
        port, sep, rate = value.rpartition(":")
        if sep:
            if not port.isdigit() or not 0 <= int(port) < 512:
                raise ValueError(f"--port-rate {value}: the port must be in 0..511")
            per_port[int(port)] = parse_rate(rate)
        else:
            every = parse_rate(rate)
    return every, per_port


def shaped_rate_bps(ifname: str) -> float | None:
    """The lowest rate a tc qdisc or class on `ifname` shapes to (bits/s); None if unshaped."""
    tc = shutil.which("tc") or "/usr/sbin/tc"
    rates: list[float] = []
    for kind in ("qdisc", "class"):
        try:
            out = subprocess.run([tc, kind, "show", "dev", ifname], capture_output=True,
                                 text=True, timeout=5, check=False).stdout
        except (OSError, subprocess.TimeoutExpired):
            return None
        for number, prefix, unit in TC_RATE.findall(out):
            bits = float(number) * TC_UNITS[prefix] * (8 if unit == "bps" else 1)
            if bits > 0:
                rates.append(bits)
    return min(rates) if rates else None
