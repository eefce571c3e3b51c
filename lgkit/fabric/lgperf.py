"""LinkGuardian performance table: effective loss and capacity of a protected link."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

DEFAULT_TABLE = Path(__file__).resolve().parents[2] / "measurements/reference/lg_perf_100g.csv"
"""The paper's 100G numbers (measurements/reference/lg_perf_100g.csv)."""

COLUMNS = ("actual_loss_rate", "effective_loss_rate", "effective_gbps", "link_gbps")
LOOKUP_SCALES = ("linear", "log")
"""How a loss rate picks its table row: nearest |difference| (the authors' simulator) or log10."""


@dataclass(frozen=True)
class LgPerformance:
    """Rows of (actual loss, effective loss, effective capacity as a share of the link rate)."""

    actual_loss: np.ndarray
    effective_loss: np.ndarray
    capacity_share: np.ndarray

    @classmethod
    def load(cls, path: Path = DEFAULT_TABLE) -> LgPerformance:
        """Read a CSV with the columns of COLUMNS ('#' lines are comments)."""
        if not path.is_file():
            raise ValueError(f"LinkGuardian performance table not found (or not a regular file): "
                             f"{path}")
        try:
            table = pd.read_csv(path, comment="#")
            missing = [column for column in COLUMNS if column not in table.columns]
            if missing or table.empty:
                raise ValueError(f"needs rows and the columns {', '.join(COLUMNS)}")
            values = table[list(COLUMNS)].to_numpy(dtype=float)
        except (ValueError, OSError) as error:
            raise ValueError(f"{path}: not a LinkGuardian performance table: {error}") from None
        if not np.isfinite(values).all() or (values <= 0).any():
            raise ValueError(f"{path}: every value must be positive and finite")
        order = np.argsort(values[:, 0], kind="stable")
        values = values[order]
        return cls(values[:, 0], values[:, 1], values[:, 2] / values[:, 3])

    def lookup(self, loss: np.ndarray, scale: str = "linear") -> tuple[np.ndarray, np.ndarray]:
        """(effective loss, capacity share) of the row nearest to each loss rate.

        `linear` takes the smallest |loss - tested loss| as the authors' simulator does (on a tie
        the lower row); `log` the smallest distance in log10.
        """
        if scale not in LOOKUP_SCALES:
            raise ValueError(f"LG table lookup must be one of {', '.join(LOOKUP_SCALES)}")
        loss, tested = np.atleast_1d(loss), self.actual_loss
        if scale == "log":
            loss, tested = np.log10(loss), np.log10(tested)
        row = np.abs(loss[:, None] - tested).argmin(axis=1)
        return self.effective_loss[row], self.capacity_share[row]
