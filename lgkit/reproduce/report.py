"""Ours beside the paper's: comparison tables with the scale used, and the checks an issue names."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

Value = float | int | str | None
"A table cell: a number, a text, or None for 'no value' (printed as n/a)."


@dataclass(frozen=True)
class Row:
    """One row of a comparison: our values and the paper's for the same columns."""

    label: str
    ours: Sequence[Value]
    paper: Sequence[Value] = ()
    "Empty: the paper has no such row (only ours is printed)."


@dataclass(frozen=True)
class Check:
    """A number an issue asks for, with its threshold, printed as PASS or FAIL."""

    text: str
    "What is checked, with the measured numbers (e.g. 'p99.9 143 B: 41x lower with LG')."
    passed: bool

    def format(self) -> str:
        return f"check: {self.text}: {'PASS' if self.passed else 'FAIL'}"


@dataclass(frozen=True)
class Comparison:
    """A table of our results beside the paper's, with the scale that produced ours."""

    title: str
    columns: Sequence[str]
    rows: Sequence[Row]
    scale: str
    "One line: target, link rate and the factor against the paper's testbed."
    units: str = ""
    "One line on units, e.g. 'ours: ms at 10 Mb/s; paper: us at 100 Gb/s'."
    notes: Sequence[str] = ()
    checks: Sequence[Check] = field(default_factory=tuple)
    digits: int = 3
    "Significant digits of numbers."

    def _cell(self, value: Value) -> str:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "n/a"
        if isinstance(value, str):
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        return f"{value:.{self.digits}g}"

    def format(self) -> str:
        """The table as printed by `lgkit reproduce`."""
        label_width = max([len(r.label) for r in self.rows] + [5])
        lines = [[r.label, "ours", *map(self._cell, r.ours)] for r in self.rows]
        papers = [["", "paper", *map(self._cell, r.paper)] if r.paper else None
                  for r in self.rows]
        body = [line for pair in zip(lines, papers, strict=True) for line in pair
                if line is not None]
        header = ["", "", *self.columns]
        widths = [max(len(row[i]) for row in [header, *body] if i < len(row))
                  for i in range(len(header))]
        widths[0] = max(widths[0], label_width)

        def render(row: list[str]) -> str:
            cells = [row[0].ljust(widths[0]), row[1].ljust(widths[1])]
            cells += [c.rjust(w) for c, w in zip(row[2:], widths[2:], strict=False)]
            return "  ".join(cells).rstrip()

        out = [f"== {self.title} ==", f"scale: {self.scale}"]
        if self.units:
            out.append(f"units: {self.units}")
        out.append(render(header))
        out += [render(row) for row in body]
        out += [f"note: {note}" for note in self.notes]
        out += [check.format() for check in self.checks]
        return "\n".join(out)

    def tidy(self, experiment: str) -> list[dict[str, Value]]:
        """One record per (row, column): ours and the paper's value (for summary.csv)."""
        records = []
        for row in self.rows:
            for i, column in enumerate(self.columns):
                records.append({
                    "experiment": experiment, "table": self.title, "row": row.label,
                    "column": column, "ours": row.ours[i] if i < len(row.ours) else None,
                    "paper": row.paper[i] if i < len(row.paper) else None,
                })
        return records


def ratio(numerator: float, denominator: float) -> float:
    """numerator / denominator, NaN when the denominator is 0 or either is NaN."""
    if denominator == 0 or math.isnan(numerator) or math.isnan(denominator):
        return math.nan
    return numerator / denominator
