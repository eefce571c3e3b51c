"""Fig. 18 in virtual time: consecutive losses at 1% and 5% loss, i.i.d. and bursty."""

from __future__ import annotations

from typing import Any

from lgkit.reproduce.context import Context
from lgkit.reproduce.report import Comparison
from lgkit.sim import figures


def add_arguments(group: Any) -> None:
    figures.add_arguments(group)


def run(ctx: Context) -> list[Comparison]:
    return figures.run("fig18", ctx)
