"""Table 4 in virtual time: recirculation overhead as a share of the pipeline's capacity."""

from __future__ import annotations

from typing import Any

from lgkit.reproduce import stress
from lgkit.reproduce.context import Context
from lgkit.reproduce.report import Comparison


def add_arguments(group: Any) -> None:
    stress.add_arguments(group)


def run(ctx: Context) -> list[Comparison]:
    return stress.run("table4", ctx)
