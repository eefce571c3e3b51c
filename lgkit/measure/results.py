"""The results store: one folder per run with metadata.json and tidy CSV tables."""

from __future__ import annotations

import csv
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

RESULTS_ROOT = Path(__file__).resolve().parents[2] / "measurements" / "runs"
STATUSES = ("running", "complete", "incomplete")


class RunStore:
    """A run's folder. Tables are appended row by row, so a crash keeps what was measured."""

    def __init__(self, name: str, metadata: dict[str, Any], root: Path | None = None) -> None:
        root = root or RESULTS_ROOT
        stamp = time.strftime("%Y%m%d-%H%M%S")
        self.path = _unique_dir(root / f"{stamp}-{name}")
        self.metadata: dict[str, Any] = {
            "name": name, "status": "running", "started": time.time(),
            "argv": sys.argv, "host": platform.node(), "kernel": platform.release(),
            "pid": os.getpid(), **metadata,
        }
        self._write_metadata()

    def _write_metadata(self) -> None:
        tmp = self.path / "metadata.json.tmp"
        tmp.write_text(json.dumps(self.metadata, indent=2, default=str) + "\n")
        tmp.replace(self.path / "metadata.json")

    def note(self, **fields: Any) -> None:
        """Add fields to the metadata (written at once)."""
        self.metadata.update(fields)
        self._write_metadata()

    def append(self, table: str, row: dict[str, Any]) -> None:
        """Append one row to TABLE.csv (header written with the first row)."""
        path = self.path / f"{table}.csv"
        new = not path.exists()
        with path.open("a", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(row))
            if new:
                writer.writeheader()
            writer.writerow(row)

    def finish(self, status: str, reason: str = "") -> None:
        """Mark the run complete or incomplete (with the reason)."""
        if status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}")
        self.note(status=status, finished=time.time(), reason=reason)


def _unique_dir(path: Path) -> Path:
    candidate, n = path, 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}-{n}")
    candidate.mkdir(parents=True)
    return candidate


def read_metadata(run_dir: Path) -> dict[str, Any]:
    """A run's metadata."""
    return json.loads((Path(run_dir) / "metadata.json").read_text())


def mark_incomplete_if_running(run_dir: Path, reason: str) -> bool:
    """Mark a run that never finished as incomplete; True if it was still `running`."""
    path = Path(run_dir) / "metadata.json"
    meta = json.loads(path.read_text())
    if meta.get("status") != "running":
        return False
    meta.update(status="incomplete", finished=time.time(), reason=reason)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(meta, indent=2, default=str) + "\n")
    tmp.replace(path)
    return True


def read_table(run_dir: Path, table: str) -> list[dict[str, str]]:
    """Rows of a run's table."""
    with (Path(run_dir) / f"{table}.csv").open(newline="") as handle:
        return list(csv.DictReader(handle))
