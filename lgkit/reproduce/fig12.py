"""Fig. 12 in virtual time: Tx and Rx buffer usage under the line-rate stress test."""

from __future__ import annotations

from typing import Any

from lgkit.reproduce.context import Context
from lgkit.reproduce.report import Comparison
from lgkit.sim import figures


def add_arguments(group: Any) -> None:
    figures.add_arguments(group)


def run(ctx: Context) -> list[Comparison]:
    return figures.run("fig12", ctx)
