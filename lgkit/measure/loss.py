"""Loss metrics of the paper (§6 of the brief) from counters at measurement points A-D."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

POINTS = ("A", "B", "C", "D")


@dataclass(frozen=True)
class PointCounts:
    """Packets counted at A (into the LG sender), B (onto the link), C (accepted from the
    link) and D (out of the LG receiver)."""

    a: int
    b: int
    c: int
    d: int

    def __sub__(self, other: PointCounts) -> PointCounts:
        return PointCounts(self.a - other.a, self.b - other.b, self.c - other.c,
                           self.d - other.d)

    @property
    def actual_loss(self) -> float:
        """(B - C) / B: frames lost on the link, retransmissions included."""
        return (self.b - self.c) / self.b if self.b else 0.0

    @property
    def effective_loss(self) -> float:
        """(A - D) / A: packets that entered the protected path and never left it."""
        return max(0, self.a - self.d) / self.a if self.a else 0.0


def snapshot(counter: Callable[[str], int]) -> PointCounts:
    """Read all four points with `counter(point)`."""
    return PointCounts(*(counter(p) for p in POINTS))
