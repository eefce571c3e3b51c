"""The stress-test experiments at --quick scale print ours beside the paper's, and their
notebooks (Fig. 8, 12, 17, 18, Table 4) execute headless on those results."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from lgkit.sim.figures import EXPERIMENTS, run_experiment

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
PNG_SIGNATURE = bytes([0x89]) + b"PNG"
FIGURES = ("fig8", "fig12", "fig17", "fig18", "table4")


@pytest.fixture(scope="module")
def quick_results(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("vtime-results")
    printed = {}
    for name in EXPERIMENTS:  # the stress points are run once and reused from the cache
        tables = run_experiment(name, quick=True, seed=1, results=root, workers=2,
                                progress=False)
        printed[name] = "\n".join(t.format() for t in tables)
    return root, printed


def test_quick_experiments_print_ours_beside_the_paper(
        quick_results: tuple[Path, dict[str, str]]) -> None:
    root, printed = quick_results
    assert "paper  1.16e-03" not in printed["fig8"]  # numbers are formatted, not raw
    assert "100G 1e-03 LG" in printed["fig8"] and "paper" in printed["fig8"]
    assert "check: LG at 100G 1e-3: link speed" in printed["fig8"]
    assert "check: p=0.05" in printed["fig8"]
    assert "FAIL" not in printed["fig17"]  # the calibrated maxima hold at quick scale too
    assert "TX (sender)" in printed["table4"] and "ackNo timeouts" in printed["timeouts"]
    points = json.loads((root / "quick" / "fig8-points.json").read_text())["points"]
    assert len(points) == 12 and all(p["covered"] >= 4_000 for p in points)
    assert len(list((root / "quick" / "points").glob("*.json"))) == 12 + 1 + 4


@pytest.mark.parametrize("name", FIGURES)
def test_notebook_runs_headless(name: str, quick_results: tuple[Path, dict[str, str]],
                                monkeypatch: pytest.MonkeyPatch) -> None:
    root, _ = quick_results
    monkeypatch.setenv("LGKIT_VTIME_RESULTS", str(root))
    notebook = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    NotebookClient(notebook, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    outputs = [output for cell in notebook.cells if cell.cell_type == "code"
               for output in cell.outputs]
    assert not [output for output in outputs if output.output_type == "error"]
    assert any("image/png" in output.get("data", {}) for output in outputs)
    assert (root / "quick" / f"{name}.png").read_bytes()[:4] == PNG_SIGNATURE
