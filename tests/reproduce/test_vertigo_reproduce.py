"""`lgkit reproduce vertigo --quick` (root, Mininet): ECMP and Vertigo under incast on the
16-host leaf-spine, the tables beside the paper's, and the notebook that redraws them."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from test_net_support import assert_machine_clean
from testpaths import REPO

from lgkit.cli import main
from lgkit.measure.results import read_metadata, read_table

NOTEBOOK = REPO / "notebooks" / "vertigo.ipynb"

pytestmark = [pytest.mark.root, pytest.mark.skipif(shutil.which("iptables") is None,
                                             reason="iptables missing (make setup)")]


def test_quick_run_compares_vertigo_with_ecmp(tmp_path: Path, capsys, monkeypatch) -> None:
    # the network alone takes ~30 s to start on a busy machine: room beyond the quick 60 s
    assert main(["reproduce", "vertigo", "--quick", "--time-limit", "150", "--results",
                 str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Vertigo: incast query and flow completion times" in out
    assert "ecmp / vertigo" in out and "check: tail (p99) QCT" in out
    (folder,) = tmp_path.iterdir()
    assert read_metadata(folder)["status"] == "complete"
    network = {r["scheme"]: r for r in read_table(folder, "network")}
    assert set(network) == {"ecmp", "vertigo"}
    assert int(network["ecmp"]["vertigo_deflected"]) == 0  # ECMP never deflects
    assert int(network["vertigo"]["tm_drops"]) == 0  # P4's queue estimates held
    assert int(network["vertigo"]["queries_ok"]) > 0 and int(network["ecmp"]["queries_ok"]) > 0
    queries = read_table(folder, "queries")
    assert {q["scheme"] for q in queries} == {"ecmp", "vertigo"}
    monkeypatch.setenv("LGKIT_RUN_VERTIGO", str(folder))
    monkeypatch.setenv("LGKIT_FIGURES", str(tmp_path / "figures"))
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(notebook, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    assert (tmp_path / "figures" / "vertigo.png").read_bytes()[:4] == b"\x89PNG"
    assert_machine_clean()
