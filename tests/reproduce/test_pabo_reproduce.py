"""`lgkit reproduce pabo --quick`: the tables beside the paper's, the results folder, and the
notebook that redraws them."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from testpaths import REPO

from lgkit.cli import main
from lgkit.measure.results import read_metadata, read_table

NOTEBOOK = REPO / "notebooks" / "pabo.ipynb"


@pytest.mark.slow
def test_quick_reproduce_prints_the_paper_beside_ours_and_the_notebook_draws_it(
        tmp_path: Path, capsys, monkeypatch) -> None:
    assert main(["reproduce", "pabo", "--quick", "--results", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "PABO burst test: drop ratio" in out and "paper" in out
    assert "FAIL" not in out and out.count("PASS") == 4
    (folder,) = tmp_path.iterdir()
    assert read_metadata(folder)["status"] == "complete"
    runs = {(r["scenario"], r["mode"]): r for r in read_table(folder, "runs")}
    assert float(runs[("moderate", "none")]["drop_ratio"]) > 0.4
    assert float(runs[("moderate", "PABO")]["drop_ratio"]) == 0.0
    monkeypatch.setenv("LGKIT_PABO_RESULTS", str(folder))
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(notebook, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    outputs = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert (folder / "pabo.png").read_bytes()[:4] == b"\x89PNG"
