"""Long TCP flows on the testbed (iperf3 h1 -> h3): goodput, retransmissions and link loss."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

from lgkit.reproduce.bed import Bed, lg_columns
from lgkit.reproduce.context import Context
from lgkit.workloads.iperf import IperfServer, TcpResult, run_tcp

SETTLE_S = 0.5
"Wait after a flow before reading counters, so that frames in flight are counted."


@dataclass(frozen=True)
class GoodputRow:
    """One iperf3 run of a goodput table."""

    label: str
    loss: float
    mode: str
    congestion: str
    seconds: float
    goodput_mbps: float
    "Receiver goodput over the whole flow."
    steady_mbps: float
    "Mean of the sender's 1 s intervals after the first (the paper averages the middle 60 s)."
    retransmits: int
    link_loss: float
    effective_loss: float
    frames_on_link: int
    lg: dict[str, int] = field(default_factory=dict)
    "LG's counters over the flow and its buffers' maxima (Bed.lg_since); empty with LG off."


def steady_mbps(result: TcpResult) -> float:
    """The mean interval throughput after the first interval (slow start)."""
    later = [i.mbps for i in result.intervals if i.start_s >= 1.0]
    return sum(later) / len(later) if later else result.goodput_mbps


def goodput_run(ctx: Context, bed: Bed, label: str, loss: float, mode: str, seconds: float,
                congestion: str = "cubic", **overrides: object) -> GoodputRow:
    """Corruption at `loss`, LG in `mode`, one iperf3 flow for `seconds`; appended to the
    run's `goodput` table (and each interval to `intervals`)."""
    bed.set_loss(loss)
    bed.protect(mode, **overrides)
    before, lg_before = bed.counts(), bed.lg_state(mode)
    with IperfServer(bed.host("h3")):
        result = run_tcp(bed.host("h1"), bed.ip("h3"), seconds, congestion)
        time.sleep(SETTLE_S)
    delta, lg = bed.counts() - before, bed.lg_since(mode, lg_before)
    bed.protect("off")
    bed.set_loss(0.0)
    row = GoodputRow(label, loss, mode, congestion, result.seconds, result.goodput_mbps,
                     steady_mbps(result), result.retransmits, delta.actual_loss,
                     delta.effective_loss, delta.b, lg)
    ctx.store.append("goodput", {**{k: v for k, v in asdict(row).items() if k != "lg"},
                                 **lg_columns(lg)})
    for interval in result.intervals:
        ctx.store.append("intervals", {"label": label, "loss": loss, "mode": mode,
                                       **asdict(interval)})
    return row
