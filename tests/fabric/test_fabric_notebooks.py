"""The Fig. 13 and Fig. 14 notebooks execute headless on a tiny fabric's results."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from testpaths import REPO

from lgkit.fabric import runs
from lgkit.fabric.runs import RunSpec
from lgkit.fabric.topology import facebook_fabric
from lgkit.fabric.trace import TraceParams

NOTEBOOKS = REPO / "notebooks"
PNG_SIGNATURE = bytes([0x89]) + b"PNG"


@pytest.fixture(scope="module")
def tiny_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("fabric-results")
    for constraint in (0.5, 0.75):
        spec = RunSpec(facebook_fabric(2, 4, 4, 4), constraint,
                       TraceParams(seed=1, days=21, mttf_hours=400.0))
        runs.save(runs.execute(spec), folder)
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("number", [13, 14])
def test_notebook_runs_headless(
    number: int, tiny_results: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LGKIT_FABRIC_RESULTS", str(tiny_results))
    notebook = nbformat.read(NOTEBOOKS / f"fig{number}.ipynb", as_version=4)
    NotebookClient(notebook, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    outputs = [output for cell in notebook.cells if cell.cell_type == "code"
               for output in cell.outputs]
    assert not [output for output in outputs if output.output_type == "error"]
    assert any("image/png" in output.get("data", {}) for output in outputs)
    assert (tiny_results / f"fig{number}.png").read_bytes()[:4] == PNG_SIGNATURE
