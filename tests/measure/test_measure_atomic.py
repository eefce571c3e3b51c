"""Results tables survive a kill at any moment: whole-table writes are atomic, appended rows are
never torn, and the run folder's schema is what docs/experiments.md says."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from lgkit.measure.results import RunStore, read_table, write_csv

WRITER = """
import sys
from pathlib import Path
from lgkit.measure.results import write_csv
rows = ({"i": i, "text": "x" * 40, "value": i * 0.5} for i in range(3_000_000))
write_csv(Path(sys.argv[1]), rows)
"""

APPENDER = """
import sys
from lgkit.measure.results import RunStore
store = RunStore("kill", {}, root=__import__("pathlib").Path(sys.argv[1]))
print(store.path, flush=True)
i = 0
while True:
    store.append("samples", {"i": i, "text": "y" * (i % 97), "half": i / 2})
    i += 1
"""


def _wait_for(predicate, timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.01)


def test_whole_table_write_killed_midway_leaves_the_old_table(tmp_path: Path) -> None:
    table = tmp_path / "fct.csv"
    write_csv(table, [{"i": 0, "text": "old", "value": 1.0}])
    before = table.read_bytes()
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(table)])
    _wait_for(lambda: any(p.name.startswith(".fct.csv.") for p in tmp_path.iterdir()))
    time.sleep(0.2)  # the temporary file is being filled
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    assert table.read_bytes() == before


def test_whole_table_write_replaces_in_one_step(tmp_path: Path) -> None:
    table = tmp_path / "t.csv"
    write_csv(table, [{"a": 1, "b": "x,y"}])
    write_csv(table, [{"a": 2, "b": "z"}, {"a": 3, "b": ""}])
    assert read_table(tmp_path, "t") == [{"a": "2", "b": "z"}, {"a": "3", "b": ""}]
    assert [p.name for p in tmp_path.iterdir()] == ["t.csv"]


def test_appender_killed_at_any_moment_keeps_whole_rows(tmp_path: Path) -> None:
    for delay in (0.3, 0.55, 0.8):
        root = tmp_path / str(delay)
        proc = subprocess.Popen([sys.executable, "-c", APPENDER, str(root)],
                                stdout=subprocess.PIPE, text=True)
        run_dir = Path(proc.stdout.readline().strip())
        # more than 10 rows whatever the machine's speed, then a kill at some moment after
        _wait_for(lambda run_dir=run_dir: (run_dir / "samples.csv").exists()
                  and len(read_table(run_dir, "samples")) > 10)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        rows = read_table(run_dir, "samples")
        assert len(rows) > 10
        for n, row in enumerate(rows):
            assert row == {"i": str(n), "text": "y" * (n % 97), "half": str(n / 2)}


def test_a_torn_last_line_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "s.csv").write_text("a,b\n1,2\n3,")
    assert read_table(tmp_path, "s") == [{"a": "1", "b": "2"}]


def test_append_keeps_the_first_rows_columns(tmp_path: Path) -> None:
    store = RunStore("unit", {}, root=tmp_path)
    store.append("t", {"a": 1, "b": 2})
    store.append("t", {"b": 4})
    assert read_table(store.path, "t") == [{"a": "1", "b": "2"}, {"a": "", "b": "4"}]
    try:
        store.append("t", {"c": 1})
    except ValueError as exc:
        assert "columns ['c'] are not in ['a', 'b']" in str(exc)
    else:
        raise AssertionError("an unknown column must be refused")
