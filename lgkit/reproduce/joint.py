"""The joint scenario (issue 16): the leaf-spine with one corrupting link, an incast and a
steady stream, with LinkGuardian, Vertigo and PABO each on or off, in virtual time: which loss
each scheme removes. There is no paper figure to compare with."""

from __future__ import annotations

import argparse
from dataclasses import asdict

from lgkit.core.argtypes import LOSS_RATE, ranged
from lgkit.reproduce.context import Context
from lgkit.reproduce.report import Check, Comparison, Row
from lgkit.schemes.joint import CONFIGS, FABRIC_RATE, HOST_RATE, JointResult, JointSetup, run_joint


def add_arguments(group: argparse._ArgumentGroup) -> None:
    """The corruption and the incast."""
    group.add_argument("--loss", type=LOSS_RATE, default=0.05,
                       help="i.i.d. loss rate of the corrupting link l1 -> s1")
    group.add_argument("--burst", type=ranged(int, 1, 1_000_000), default=10,
                       help="packets per incast sender")


def run(ctx: Context) -> list[Comparison]:
    """Every configuration with the same traffic and the same corruption."""
    results: dict[str, JointResult] = {}
    with ctx.progress(len(CONFIGS), "configurations", "run") as bar:
        for label, (lg, fabric) in CONFIGS.items():
            ctx.check_time(label)
            setup = JointSetup(lg, fabric, ctx.options.loss, burst=ctx.options.burst,
                               seed=ctx.seed_for("joint") % 2**16)
            result = results[label] = run_joint(setup)
            ctx.store.append("runs", {"config": label, **asdict(setup), "sent": result.sent,
                                      "delivered": result.delivered,
                                      "congestion_drops": result.congestion_drops,
                                      "corruption_drops": result.corruption_drops,
                                      "wire_losses": result.wire_losses,
                                      "lg_retransmissions": result.lg_retransmissions,
                                      "detours": result.detours})
            bar.update()
    scale = (f"builtin, virtual time, hosts {HOST_RATE / 1e9:g} Gb/s, fabric "
             f"{FABRIC_RATE / 1e9:g} Gb/s, {ctx.options.loss:g} loss on l1 -> s1, 12 x "
             f"{ctx.options.burst} packets of incast to h16, 300 packets h1 -> h13")
    ctx.note(scale=scale)
    rows = [Row(label, [r.sent, r.delivered, r.corruption_drops, r.congestion_drops,
                        r.lg_retransmissions, r.detours]) for label, r in results.items()]
    none = results["none"]
    checks = [
        Check(f"LG removes the corruption loss ({none.corruption_drops} -> "
              f"{results['LG'].corruption_drops} packets)",
              results["LG"].corruption_drops == 0 < none.corruption_drops),
        Check(f"Vertigo lowers the congestion loss ({none.congestion_drops} -> "
              f"{results['Vertigo'].congestion_drops})",
              results["Vertigo"].congestion_drops < none.congestion_drops),
        Check(f"PABO lowers the congestion loss ({none.congestion_drops} -> "
              f"{results['PABO'].congestion_drops})",
              results["PABO"].congestion_drops < none.congestion_drops),
    ]
    return [Comparison(
        "Joint scenario: which loss each scheme removes (packets)",
        ["sent", "delivered", "lost: corruption", "lost: congestion", "LG retx",
         "deflected/bounced"], rows, scale,
        units="packets (UDP, no end-to-end retransmission)",
        notes=["l1 and s1 (the corrupting link's ends) run p4/linkguardian.p4, LG on or "
               "dormant; the other switches run p4/vertigo.p4 (ECMP or Vertigo) or p4/pabo.p4, "
               "so s1's port toward l4 drops at its tail in every configuration "
               "(docs/pabo.md, 'Joint scenario')"],
        checks=checks)]
