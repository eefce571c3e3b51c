"""Fig. 18 in virtual time: consecutive losses at 1% and 5% loss, i.i.d. and bursty."""

from __future__ import annotations

from typing import Any

from lgkit.reproduce import stress
from lgkit.reproduce.context import Context
from lgkit.reproduce.report import Comparison


def add_arguments(group: Any) -> None:
    stress.add_arguments(group)


def run(ctx: Context) -> list[Comparison]:
    return stress.run("fig18", ctx)
