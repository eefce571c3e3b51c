"""`lgkit reproduce table3 --quick` and `fig11 --quick` on the built-in target (root: Mininet),
and every testbed notebook executed headless: table3 and fig11 on those quick runs, the other
figures on the committed reference runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from testpaths import REPO

from lgkit.measure.results import read_metadata, read_table

NOTEBOOKS = REPO / "notebooks"
REFERENCE = REPO / "measurements" / "reference"
PNG = bytes([0x89]) + b"PNG"

pytestmark = [pytest.mark.root,
              pytest.mark.root]


def _reproduce(name: str, results: Path) -> Path:
    done = subprocess.run([sys.executable, "-m", "lgkit.cli", "reproduce", name, "--quick",
                           "--results", str(results)], capture_output=True, text=True,
                          timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (run,) = [p for p in results.iterdir() if p.name.endswith(f"-{name}-quick-builtin")]
    meta = read_metadata(run)
    # the run's own time: wall_s also counts the wait for the network lock (another run's)
    assert meta["status"] == "complete" and meta["finished"] - meta["started"] <= 60.0 + 5.0
    assert "== " in done.stdout and "scale: builtin, " in done.stdout
    return run


@pytest.fixture(scope="module")
def quick_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    results = tmp_path_factory.mktemp("reproduce")
    return {name: _reproduce(name, results) for name in ("table3", "fig11")}


def test_table3_quick_rows(quick_runs: dict[str, Path]) -> None:
    rows = {(r["label"], float(r["loss"])): r for r in read_table(quick_runs["table3"],
                                                                  "goodput")}
    assert set(rows) == {(label, loss) for label in ("none", "LG", "LG_NB")
                         for loss in (0.0, 0.01)}
    lossy = rows["none", 0.01]
    assert float(lossy["link_loss"]) > 0 and int(lossy["retransmits"]) > 0
    for label in ("LG", "LG_NB"):  # LG masks most of what the link loses
        row = rows[label, 0.01]
        assert float(row["effective_loss"]) < float(row["link_loss"])
    summary = read_table(quick_runs["table3"], "summary")
    assert {r["row"] for r in summary} == {"none", "Wharf", "LG", "LG_NB"}


def test_fig11_quick_conditions(quick_runs: dict[str, Path]) -> None:
    conditions = {r["condition"]: r for r in read_table(quick_runs["fig11"], "conditions")}
    assert list(conditions) == ["no loss", "loss", "LG", "LG_NB"]
    assert all(int(c["flows"]) >= 50 for c in conditions.values())
    assert float(conditions["no loss"]["link_loss"]) == 0.0
    assert float(conditions["loss"]["link_loss"]) > 0.0
    for label in ("LG", "LG_NB"):
        c = conditions[label]
        assert float(c["effective_loss"]) < float(c["link_loss"])
        # LG's own record of the condition: every notified hole retransmitted, none given up
        assert int(c["retx"]) >= int(c["loss_events"]) > 0 and int(c["timeouts"]) == 0
    assert conditions["loss"]["retx"] == ""  # LG off: nothing to read
    flows = read_table(quick_runs["fig11"], "fct")
    assert {f["size_bytes"] for f in flows} == {"143"}


def _execute(name: str, env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    notebook = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs)


@pytest.mark.parametrize("name", ["table3", "fig11"])
def test_notebook_on_the_quick_run(name: str, quick_runs: dict[str, Path], tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    _execute(name, {f"LGKIT_RUN_{name.upper()}": str(quick_runs[name]),
                    "LGKIT_FIGURES": str(tmp_path)}, monkeypatch)
    assert all(p.read_bytes()[:4] == PNG for p in tmp_path.glob("*.png"))
    assert list(tmp_path.glob(f"{name}*.png"))


@pytest.mark.parametrize("name", ["fig9", "fig10", "table2"])
def test_notebook_on_the_reference_run(name: str, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    if not (REFERENCE / name / "metadata.json").exists():
        pytest.skip(f"no reference run of {name} in measurements/reference/")
    _execute(name, {f"LGKIT_RUN_{name.upper()}": str(REFERENCE / name),
                    "LGKIT_FIGURES": str(tmp_path)}, monkeypatch)
    assert list(tmp_path.glob(f"{name}*.png"))
