"""The results store and the loss metrics of measurement points A-D."""

from __future__ import annotations

import pytest

from lgkit.measure.loss import PointCounts
from lgkit.measure.results import (
    RunStore,
    mark_incomplete_if_running,
    read_metadata,
    read_table,
)


def test_run_folder_has_metadata_and_tidy_tables(tmp_path) -> None:
    store = RunStore("unit", {"target": "builtin"}, root=tmp_path)
    store.append("phases", {"phase": "lg_off", "retransmits": 12})
    store.append("phases", {"phase": "lg_on", "retransmits": 0})
    assert read_metadata(store.path)["status"] == "running"
    store.finish("complete")
    meta = read_metadata(store.path)
    assert meta["status"] == "complete" and meta["target"] == "builtin"
    assert read_table(store.path, "phases") == [
        {"phase": "lg_off", "retransmits": "12"}, {"phase": "lg_on", "retransmits": "0"}]


def test_unfinished_run_is_marked_incomplete_once(tmp_path) -> None:
    store = RunStore("unit", {}, root=tmp_path)
    assert mark_incomplete_if_running(store.path, "killed")
    assert read_metadata(store.path)["status"] == "incomplete"
    assert not mark_incomplete_if_running(store.path, "again")
    assert read_metadata(store.path)["reason"] == "killed"


def test_two_runs_in_the_same_second_get_two_folders(tmp_path) -> None:
    assert RunStore("x", {}, root=tmp_path).path != RunStore("x", {}, root=tmp_path).path


def test_loss_metrics_from_points() -> None:
    before = PointCounts(100, 100, 100, 100)
    after = PointCounts(1100, 1120, 1109, 1095)
    delta = after - before
    assert delta.actual_loss == pytest.approx(11 / 1020)
    assert delta.effective_loss == pytest.approx(5 / 1000)
    assert PointCounts(0, 0, 0, 0).actual_loss == 0.0
