"""LinkGuardian performance table: effective loss and capacity of a protected link."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

DEFAULT_TABLE = Path(__file__).resolve().parents[2] / "measurements/reference/lg_perf_100g.csv"
"""The paper's 100G numbers (measurements/reference/lg_perf_100g.csv)."""

COLUMNS = ("actual_loss_rate", "effective_loss_rate", "effective_gbps", "link_gbps")


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
            raise ValueError(f"LinkGuardian performance table not found: {path}")
        table = pd.read_csv(path, comment="#")
        missing = [column for column in COLUMNS if column not in table.columns]
        if missing or table.empty:
            raise ValueError(f"{path}: needs rows and the columns {', '.join(COLUMNS)}")
        values = table[list(COLUMNS)].to_numpy(dtype=float)
        if (values <= 0).any():
            raise ValueError(f"{path}: every value must be positive")
        order = np.argsort(values[:, 0])
        values = values[order]
        return cls(values[:, 0], values[:, 1], values[:, 2] / values[:, 3])

    def lookup(self, loss: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(effective loss, capacity share) of the row nearest to each loss rate in log scale."""
        distance = np.abs(np.log10(np.atleast_1d(loss))[:, None] - np.log10(self.actual_loss))
        row = distance.argmin(axis=1)
        return self.effective_loss[row], self.capacity_share[row]
