"""The joint scenario in virtual time: LinkGuardian on the corrupting link beside Vertigo or
PABO on the other switches; each removes its own kind of loss (`lgkit reproduce joint`)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from testpaths import REPO

from lgkit.cli import main
from lgkit.measure.results import read_table
from lgkit.schemes.joint import JointSetup, run_joint

NOTEBOOK = REPO / "notebooks" / "joint.ipynb"


@pytest.mark.slow
def test_each_scheme_removes_its_own_loss_and_the_notebook_draws_it(
        tmp_path: Path, capsys, monkeypatch) -> None:
    assert main(["reproduce", "joint", "--quick", "--results", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.count("PASS") == 3 and "FAIL" not in out
    (folder,) = tmp_path.iterdir()
    runs = {r["config"]: r for r in read_table(folder, "runs")}
    assert set(runs) == {"none", "LG", "Vertigo", "PABO", "LG+Vertigo", "LG+PABO"}
    for label in ("LG", "LG+Vertigo", "LG+PABO"):
        assert int(runs[label]["corruption_drops"]) == 0
        assert int(runs[label]["lg_retransmissions"]) > 0
    for label in ("Vertigo", "PABO"):
        assert int(runs[label]["corruption_drops"]) == int(runs["none"]["corruption_drops"]) > 0
        assert int(runs[label]["detours"]) > 0
    monkeypatch.setenv("LGKIT_JOINT_RESULTS", str(folder))
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(notebook, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    assert (folder / "joint.png").read_bytes()[:4] == b"\x89PNG"


def test_without_corruption_nothing_is_lost_on_the_link() -> None:
    quiet = run_joint(JointSetup(True, "vertigo", loss=0.0, senders=2, burst=5, steady=50))
    assert quiet.wire_losses == 0 and quiet.corruption_drops == 0
    assert quiet.delivered == quiet.sent == 60 and quiet.congestion_drops == 0

