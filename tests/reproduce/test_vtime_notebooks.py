"""The stress-test experiments at --quick scale through `lgkit reproduce` print ours beside the
paper's, and their notebooks (Fig. 8, 12, 17, 18, Table 4) execute headless on those runs."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from testpaths import REPO

from lgkit.reproduce.registry import lookup
from lgkit.reproduce.runner import reproduce

NOTEBOOKS = REPO / "notebooks"
PNG_SIGNATURE = bytes([0x89]) + b"PNG"
FIGURES = ("fig8", "fig12", "fig17", "fig18", "table4")
EXPERIMENTS = (*FIGURES, "timeouts")


@pytest.fixture(scope="module")
def quick_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("runs")
    printed = {}
    for name in EXPERIMENTS:  # the stress points run once, then come from the cache
        lines: list[str] = []
        reproduce(lookup(name), ["--quick", "--time-limit", "600", "--results", str(root)],
                  log=lines.append)
        printed[name] = "\n".join(lines)
    return root, printed


@pytest.mark.slow
def test_quick_experiments_print_ours_beside_the_paper(
        quick_runs: tuple[Path, dict[str, str]]) -> None:
    root, printed = quick_runs
    fig8 = printed["fig8"]
    assert "100G 1e-03 LG" in fig8 and "paper" in fig8 and "scale: virtual time" in fig8
    assert "check: LG at 100G 1e-3: link speed" in fig8 and "check: p=0.05" in fig8
    assert "FAIL" not in printed["fig17"]  # the calibrated maxima hold at quick scale too
    assert "TX (sender)" in printed["table4"] and "ackNo timeouts" in printed["timeouts"]
    (run,) = root.glob("*-fig8-quick-builtin")
    points = json.loads((run / "points.json").read_text())["points"]
    assert len(points) == 12 and all(p["covered"] >= 4_000 for p in points)
    assert json.loads((run / "metadata.json").read_text())["status"] == "complete"
    assert (run / "summary.csv").read_text().count("\n") > 12 * 6
    assert len(list((root / "vtime-points" / "quick").glob("*.json"))) == 12 + 1 + 4


@pytest.mark.slow
@pytest.mark.parametrize("name", FIGURES)
def test_notebook_runs_headless(name: str, quick_runs: tuple[Path, dict[str, str]],
                                monkeypatch: pytest.MonkeyPatch) -> None:
    root, _ = quick_runs
    monkeypatch.setenv("LGKIT_RESULTS", str(root))
    notebook = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    NotebookClient(notebook, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    outputs = [output for cell in notebook.cells if cell.cell_type == "code"
               for output in cell.outputs]
    assert not [output for output in outputs if output.output_type == "error"]
    assert any("image/png" in output.get("data", {}) for output in outputs)
    (run,) = root.glob(f"*-{name}-quick-builtin")
    assert (run / f"{name}.png").read_bytes()[:4] == PNG_SIGNATURE
