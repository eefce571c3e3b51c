"""Execute notebooks headless (`make notebooks`): each runs top to bottom in a fresh kernel; the
executed copy goes to measurements/notebooks/ (the sources stay unexecuted in git)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "measurements" / "notebooks"


def execute(path: Path, timeout_s: int = 600) -> Path:
    """Run one notebook in its own folder; returns the executed copy's path."""
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=timeout_s, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    OUT.mkdir(parents=True, exist_ok=True)
    out = OUT / path.name
    nbformat.write(notebook, out)
    return out


def main(paths: list[str]) -> int:
    notebooks = [Path(p) for p in paths] or sorted((REPO / "notebooks").glob("*.ipynb"))
    failed = 0
    for path in notebooks:
        began = time.monotonic()
        try:
            out = execute(path)
        except CellExecutionError as exc:
            failed += 1
            print(f"{path.name}: FAILED: {exc.ename}: {exc.evalue}", file=sys.stderr)
            continue
        print(f"{path.name}: ran in {time.monotonic() - began:.1f} s -> {out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
