"""Table 2: which LinkGuardian mechanism buys what. Top-1% FCTs of 24,387 B flows with only
link-local retransmission (ReTx), then with packet-order preservation (+Order), tail-loss
handling (+Tail), or both (+Tail+Order = LG), next to no loss and unprotected loss.

The mechanisms are run-time switches of p4/linkguardian.p4: Order is LG's blocking mode (LG_NB
without it), Tail is the dummy packet (dummy_repeat = 0 turns it off), so ReTx = LG_NB without
dummies, ReTx+Order = LG without dummies, ReTx+Tail = LG_NB, ReTx+Tail+Order = LG. The paper ran
DCTCP; a kernel without it runs CUBIC instead, said in one line and in the tables.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from lgkit.measure.metrics import fewer_by_chance, quantile_ci
from lgkit.reproduce import bed as testbed
from lgkit.reproduce.bed import Bed
from lgkit.reproduce.context import Context
from lgkit.reproduce.fctrun import (
    Condition,
    FlowSpec,
    add_fct_arguments,
    fct_table,
    run_conditions,
)
from lgkit.reproduce.report import Check, Comparison, Row

SIZE = 24_387
PAPER_LINK_GBPS = 100.0
QUANTILES = (0.99, 0.999, 0.9999, 0.99999)
NO_TAIL = {"dummy_repeat": 0}
NO_TAIL_LABELS, TAIL_LABELS = ("ReTx", "ReTx+Order"), ("ReTx+Tail", "ReTx+Tail+Order")
WAIT_SIGNIFICANCE = 0.05
"The check's test level: how unlikely fewer RTO waits with Tail must be by chance alone."
FLOWS, QUICK_FLOWS = 8000, 60
"""Flows per condition: at 1e-3 loss a few in a thousand lose their tail, so the check's count
of RTO waits needs thousands per condition (3700 gave 5 waits without Tail: p = 0.03); and 3,688
bound the p99.9. Six conditions of 8000 took ~170 s at 100 Mb/s (~3.5 ms a flow, back to back;
of 3700, 212 s at 35 Mb/s): the time bound gives each condition an even share of what is left."""
RESOLUTION_NOTE = ("a 95% upper bound on the p99.9 needs 3,688 flows per condition, the p99.99 "
                   "36,887 (about 2 minutes of flows per condition at 100 Mb/s): the p99.99 and "
                   "p99.999 are shown for comparison with the paper, in parentheses")
PAPER_US = {
    "no loss": [152.293, 166.877, 197.536, 253.207, 21.3],
    "loss": [169.044, 3399.743, 4036.167, 4159.96, 172.294],
    "ReTx": [161.959, 212.378, 3606.115, 4107.404, 63.695],
    "ReTx+Order": [161.168, 193.252, 3773.866, 4088.288, 80.148],
    "ReTx+Tail": [156.627, 195.588, 314.128, 356.503, 22.629],
    "ReTx+Tail+Order": [155.669, 168.21, 194.085, 235.793, 22.286],
}
"Paper Table 2 (us; DCTCP, 100G, 1e-3): p99, p99.9, p99.99, p99.999, std dev."


def add_arguments(group: Any) -> None:
    add_fct_arguments(group, 1e-3, FLOWS, QUICK_FLOWS)


EXPECTED = testbed.EXPECTED


def preflight(options: argparse.Namespace) -> str | None:
    return testbed.preflight(options.target)


def conditions(loss: float) -> list[Condition]:
    """The six columns of Table 2."""
    return [Condition("no loss", 0.0), Condition("loss", loss),
            Condition("ReTx", loss, "lg_nb", NO_TAIL),
            Condition("ReTx+Order", loss, "lg", NO_TAIL),
            Condition("ReTx+Tail", loss, "lg_nb"),
            Condition("ReTx+Tail+Order", loss, "lg")]


def run(ctx: Context) -> list[Comparison]:
    options = ctx.options
    cc = testbed.paper_congestion(options.cc, "dctcp", "cubic", ctx.log)
    flows = options.flows or (QUICK_FLOWS if ctx.quick else FLOWS)
    spec = FlowSpec(size=SIZE, congestion=cc, flows=flows)
    ctx.note(flow_size=SIZE, congestion=cc, loss=options.loss)
    with Bed(ctx) as bed:
        bed.start(ecn=cc == "dctcp", paper_link_gbps=PAPER_LINK_GBPS)
        fcts = run_conditions(ctx, bed, conditions(options.loss), spec)
        scale = f"{bed.scale()}; loss {options.loss:g} (paper 1e-3); {cc}"
        rto_min_ms = bed.rto_min_ms
    table = fct_table(f"Table 2: top-1% FCT (and std dev) of {SIZE} B {cc} flows by mechanism",
                      fcts, scale, {k: v[:4] for k, v in PAPER_US.items()}, QUANTILES)
    table = Comparison(table.title, [*table.columns, "std"],
                       [_with_std(row, fcts) for row in table.rows], table.scale, table.units,
                       notes=[RESOLUTION_NOTE], checks=[_tail_check(fcts, rto_min_ms)])
    return [table]


def _with_std(row: Row, fcts: dict[str, np.ndarray]) -> Row:
    label = row.label.split(" (n=")[0]
    values = fcts[label]
    std = f"{np.std(values) / 1000:.3g}" if len(values) else None
    return Row(row.label, [*row.ours, std], [*row.paper, PAPER_US[label][4]] if row.paper
               else [])


def _tail_check(fcts: dict[str, np.ndarray], rto_min_ms: int) -> Check:
    """Tail-loss handling removes the waits for an RTO: fewer flows reach rto_min with it
    (ReTx+Tail, ReTx+Tail+Order) than without (ReTx, ReTx+Order), at 5% by a one-sided Fisher
    exact test. The paper shows it at p99.99 (3606 -> 314 us), which needs ~36,900 flows per
    condition; its p99.9s (212 -> 196 us) differ by less than our run-to-run noise, so ours
    are printed beside the count, not tested."""
    without, with_tail = (_waits(fcts, labels, rto_min_ms) for labels in (NO_TAIL_LABELS,
                                                                         TAIL_LABELS))
    p = fewer_by_chance(with_tail[0], with_tail[1], without[0], without[1])
    retx, tail = (quantile_ci(fcts.get(label, np.array([])), 0.999)
                  for label in ("ReTx", "ReTx+Tail"))
    return Check(f"tail-loss handling removes the waits for an RTO: flows reaching rto_min "
                 f"({rto_min_ms} ms) {without[0]} of {without[1]} without Tail, {with_tail[0]} "
                 f"of {with_tail[1]} with it (one-sided Fisher p = {p:.2g}, goal < "
                 f"{WAIT_SIGNIFICANCE:g}); p99.9 ReTx {retx.value / 1000:.3g} -> ReTx+Tail "
                 f"{tail.value / 1000:.3g} ms (paper 212 -> 196 us at p99.9, 3606 -> 314 us at "
                 f"p99.99)", p < WAIT_SIGNIFICANCE)


def _waits(fcts: dict[str, np.ndarray], labels: tuple[str, ...], rto_min_ms: int
           ) -> tuple[int, int]:
    """Flows of these conditions that took rto_min or longer, and all their flows."""
    values = [fcts.get(label, np.array([])) for label in labels]
    return (sum(int((v >= rto_min_ms * 1000).sum()) for v in values),
            sum(len(v) for v in values))
