"""§4.1 in virtual time: ackNo timeouts among the loss events of the Fig. 8 LG points."""

from __future__ import annotations

from typing import Any

from lgkit.reproduce import stress
from lgkit.reproduce.context import Context
from lgkit.reproduce.report import Comparison


def add_arguments(group: Any) -> None:
    stress.add_arguments(group)


def run(ctx: Context) -> list[Comparison]:
    return stress.run("timeouts", ctx)
