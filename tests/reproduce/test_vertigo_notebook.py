"""The Vertigo notebook executes headless on the committed reference run (no root needed; the
quick run's notebook is tested with the run, tests/reproduce/test_vertigo_reproduce.py)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from testpaths import REPO

REFERENCE = REPO / "measurements" / "reference" / "vertigo"


@pytest.mark.slow
def test_notebook_on_the_reference_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not (REFERENCE / "metadata.json").exists():
        pytest.skip("no reference run of vertigo in measurements/reference/")
    monkeypatch.setenv("LGKIT_RUN_VERTIGO", str(REFERENCE))
    monkeypatch.setenv("LGKIT_FIGURES", str(tmp_path))
    notebook = nbformat.read(REPO / "notebooks" / "vertigo.ipynb", as_version=4)
    NotebookClient(notebook, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(REPO / "notebooks")}}).execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert any("image/png" in o.get("data", {}) for o in outputs)
    assert "default scale" in str(outputs)  # the reference is a default-scale run
    assert (tmp_path / "vertigo.png").read_bytes()[:4] == b"\x89PNG"
