"""Fig. 8 in virtual time: effective loss and link speed of LG and LG_NB at 25G and 100G."""

from __future__ import annotations

from typing import Any

from lgkit.reproduce import stress
from lgkit.reproduce.context import Context
from lgkit.reproduce.report import Comparison


def add_arguments(group: Any) -> None:
    stress.add_arguments(group)


def run(ctx: Context) -> list[Comparison]:
    return stress.run("fig8", ctx)
