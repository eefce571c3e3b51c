"""Fig. 17 in virtual time: retransmission delay from loss detection to the retransmission."""

from __future__ import annotations

from typing import Any

from lgkit.reproduce.context import Context
from lgkit.reproduce.report import Comparison
from lgkit.sim import figures


def add_arguments(group: Any) -> None:
    figures.add_arguments(group)


def run(ctx: Context) -> list[Comparison]:
    return figures.run("fig17", ctx)
