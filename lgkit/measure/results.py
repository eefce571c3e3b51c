"""The results store: one folder per run with metadata.json and tidy CSV tables.

Two ways to write a table, both safe against a crash or a kill at any moment:
- `append(table, row)`: one complete line per call (a single write on an O_APPEND file), so a
  sampler that dies keeps every row written so far; a reader skips a torn last line.
- `write_table(table, rows)`: the whole table at once, through a temporary file renamed over
  the old one, so readers see the previous version or the new one, never a mix.
"""

from __future__ import annotations

import csv
import io
import json
import os
import platform
import shutil
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from lgkit.sw.atomic_file import atomic_file, write_atomic

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
        try:
            self._write_metadata()
        except OSError:
            shutil.rmtree(self.path, ignore_errors=True)  # a folder that says nothing
            raise

    def _write_metadata(self) -> None:
        write_atomic(self.path / "metadata.json",
                     json.dumps(self.metadata, indent=2, default=str) + "\n")

    def note(self, **fields: Any) -> None:
        """Add fields to the metadata (written at once)."""
        self.metadata.update(fields)
        self._write_metadata()

    def append(self, table: str, row: dict[str, Any]) -> None:
        """Append one row to TABLE.csv; the first row's keys are the table's columns."""
        path = self.path / f"{table}.csv"
        columns = _header(path)
        text = "" if columns else _csv_line(list(row))
        columns = columns or list(row)
        extra = set(row) - set(columns)
        if extra:
            raise ValueError(f"{table}: columns {sorted(extra)} are not in {columns}")
        text += _csv_line([row.get(c, "") for c in columns])
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)

    def write_table(self, table: str, rows: Iterable[dict[str, Any]],
                    columns: Sequence[str] | None = None) -> Path:
        """Write TABLE.csv whole and atomically (columns: the first row's keys if not given)."""
        return write_csv(self.path / f"{table}.csv", rows, columns)

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
    """Rows of a run's table (a torn last line, left by a kill mid-write, is skipped)."""
    text = (Path(run_dir) / f"{table}.csv").read_text()
    if text and not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]
    return list(csv.DictReader(io.StringIO(text)))


def write_csv(path: Path, rows: Iterable[dict[str, Any]],
              columns: Sequence[str] | None = None) -> Path:
    """Write a CSV file atomically: to a temporary file in the same folder, synced, renamed."""
    rows = list(rows)
    columns = list(columns if columns is not None else (rows[0] if rows else []))
    with atomic_file(path, newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return path


def _csv_line(values: Sequence[Any]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow(values)
    return out.getvalue()


def _header(path: Path) -> list[str]:
    """The columns of an existing table, [] if it does not exist yet."""
    try:
        with path.open(newline="") as handle:
            return next(csv.reader(handle), [])
    except FileNotFoundError:
        return []
