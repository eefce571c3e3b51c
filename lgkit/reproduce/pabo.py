"""PABO's burst test (paper §V-B, Table I, Fig. 7): drop ratio with and without packet bounce
on the tree, for 500-, 1500- and 2500-packet bursts, in virtual time."""

from __future__ import annotations

import argparse
from dataclasses import asdict

from lgkit.core.argtypes import ranged
from lgkit.reproduce.context import Context
from lgkit.reproduce.report import Check, Comparison, Row
from lgkit.schemes.pabo_burst import BurstResult, BurstSetup, run_burst
from lgkit.schemes.pabo_control import PaboParams

BURSTS = {"mild": 500, "moderate": 1500, "severe": 2500}
"numPacketsPerGenerate of the paper's three scenarios."
QUICK_FACTOR = 10
"--quick divides bursts and queues by this (the fluid picture, hence the ratios, is the same)."
PAPER_DROP_PCT = {"none": [0.13, 44.46, 53.34], "PABO": [0.0, 0.0, 0.0]}
"§V-B: drop rates at S7 without PABO; PABO prevents packet loss."
PAPER_MAX_DISTANCE_PCT = {"mild": [43.45, 56.55, None, None],
                          "moderate": [14.73, 85.27, None, None],
                          "severe": [8.82, 84.14, 7.04, None]}
"Table I: packets by maxBouncedDistance (0, 1, 2, 3), percent."
EDGE = ("s1", "s2", "s3")
"The switches next to the senders."
PAPER_SEVERE_HOPS_11 = 86.64
"Fig. 7b: share of packets with totalHop <= 11 in the severe scenario, percent."


def add_arguments(group: argparse._ArgumentGroup) -> None:
    """The bounce function's parameters (the paper's §V setting by default)."""
    group.add_argument("--theta", type=ranged(float, 0.0, 1.0, above=True), default=0.8,
                       help="queue utilization threshold")
    group.add_argument("--lam", type=ranged(float, 0.0, 1e6, above=True), default=50.0,
                       help="exponential decay constant")


def run(ctx: Context) -> list[Comparison]:
    """Both modes for each burst, then the tables."""
    factor = QUICK_FACTOR if ctx.quick else 1
    params = PaboParams(theta=ctx.options.theta, lam=ctx.options.lam, capacity=500 // factor,
                        bounce_capacity=500 // factor)
    ctx.note(scale=_scale(factor), pabo=asdict(params), bursts={k: v // factor
                                                                for k, v in BURSTS.items()})
    results: dict[tuple[str, str], BurstResult] = {}
    with ctx.progress(2 * len(BURSTS), "bursts", "run") as bar:
        for scenario, burst in BURSTS.items():
            for mode in ("none", "PABO"):
                ctx.check_time(f"{scenario} {mode}")
                setup = BurstSetup(burst // factor, mode == "PABO", params,
                                   seed=ctx.seed_for(scenario, mode) % 2**16)
                result = run_burst(setup)
                results[(scenario, mode)] = result
                _store(ctx, scenario, mode, result)
                bar.update()
    return [_drop_table(results, factor), _distance_table(results, factor),
            _hops_table(results, factor)]


def _scale(factor: int) -> str:
    queues = (f"queues {500 // factor} normal + {500 // factor} bounce packets "
              f"(PABO off: {1000 // factor})")
    if factor == 1:
        return f"builtin, virtual time, 1 Gb/s links and {queues}, as the paper's: 1/1"
    return (f"builtin, virtual time, 1 Gb/s links, {queues}; bursts and queues 1/{factor} of "
            "the paper's")


def _store(ctx: Context, scenario: str, mode: str, r: BurstResult) -> None:
    base = {"scenario": scenario, "mode": mode, "burst": r.setup.burst}
    ctx.store.append("runs", {**base, "sent": r.sent, "delivered": r.delivered,
                              "drop_ratio": r.drop_ratio, "duplicates": r.duplicates,
                              "tm_drops": r.tm_drops, "stray": r.stray,
                              "bounced_share": r.bounced_share,
                              "last_arrival_us": r.last_arrival_ns / 1000})
    for switch in r.drops_by_switch:
        ctx.store.append("switches", {**base, "switch": switch,
                                      "drops": r.drops_by_switch[switch],
                                      "bounces": r.bounces_by_switch[switch]})
    for distance, packets in sorted(r.max_distance.items()):
        ctx.store.append("max_distance", {**base, "max_distance": distance, "packets": packets})
    for hops, packets in sorted(r.total_hops.items()):
        ctx.store.append("total_hops", {**base, "total_hops": hops, "packets": packets})


def _drop_table(results: dict[tuple[str, str], BurstResult], factor: int) -> Comparison:
    rows = [Row(mode, [100 * results[(s, mode)].drop_ratio for s in BURSTS],
                PAPER_DROP_PCT[mode]) for mode in ("none", "PABO")]
    checks = []
    for scenario in BURSTS:
        none, pabo = results[(scenario, "none")], results[(scenario, "PABO")]
        better = pabo.drop_ratio < none.drop_ratio if none.drop_ratio else not pabo.drop_ratio
        checks.append(Check(f"{scenario}: PABO drops {100 * pabo.drop_ratio:.2f}% vs none "
                            f"{100 * none.drop_ratio:.2f}% (lower, or both 0)", better))
    strays = sum(r.stray + r.tm_drops + r.duplicates for r in results.values())
    checks.append(Check(f"no bounced packet reached a host, no duplicate, no TM drop "
                        f"({strays} found)", strays == 0))
    edge = ", ".join(f"{s} {sum(results[(s, 'PABO')].drops_by_switch[x] for x in EDGE)}"
                     for s in BURSTS)
    return Comparison(
        "PABO burst test: drop ratio (%), 3 senders -> 1 receiver (paper §V-B)",
        [f"{s} ({BURSTS[s] // factor})" for s in BURSTS], rows, _scale(factor),
        units="percent of sent packets not delivered",
        notes=[f"PABO's drops at the edge switches s1-s3: {edge} packets; a switch never bounces "
               "toward a host here, where the paper's hosts took bounced packets back into their "
               "send buffer (its Table I 'distance 2' share); docs/pabo.md",
               "theta 0.8, lambda 50 as the paper's §V; --theta and --lam change them"],
        checks=checks, digits=4)


def _percent(counts: dict[int, int], key: int) -> float | None:
    total = sum(counts.values())
    return 100 * counts.get(key, 0) / total if total else None


def _distance_table(results: dict[tuple[str, str], BurstResult], factor: int) -> Comparison:
    rows = [Row(s, [_percent(results[(s, "PABO")].max_distance, d) for d in range(4)],
                PAPER_MAX_DISTANCE_PCT[s]) for s in BURSTS]
    return Comparison("PABO: delivered packets by maxBouncedDistance (%) (paper Table I)",
                      ["0", "1", "2", "3"], rows, _scale(factor),
                      units="percent of delivered packets (paper: '-' printed as n/a)")


def _hops_share(counts: dict[int, int], most: int) -> float | None:
    total = sum(counts.values())
    return 100 * sum(v for k, v in counts.items() if k <= most) / total if total else None


def _hops_table(results: dict[tuple[str, str], BurstResult], factor: int) -> Comparison:
    rows = []
    for scenario in BURSTS:
        r = results[(scenario, "PABO")]
        paper = [None, None, PAPER_SEVERE_HOPS_11] if scenario == "severe" else []
        rows.append(Row(scenario, [_hops_share(r.total_hops, 3), _hops_share(r.total_hops, 5),
                                   _hops_share(r.total_hops, 11)], paper))
    return Comparison("PABO: delivered packets by totalHop (% within) (paper Fig. 7b)",
                      ["<= 3 hops", "<= 5 hops", "<= 11 hops"], rows, _scale(factor),
                      units="percent of delivered packets; 3 hops = never bounced",
                      notes=["paper: 'almost all packets' within 5 hops in the mild scenario"])
