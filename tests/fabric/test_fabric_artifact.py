"""A small fixed trace in the authors' JSON format, with the CorrOpt states their simulator's
rules give (worked out by hand below), and the trace interchange between the two tools."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from test_fabric_cli import lgkit
from test_fabric_paths import enumerate_paths

from lgkit.fabric import artifact, runs
from lgkit.fabric.repairs import ARTIFACT_REPAIR_SEED
from lgkit.fabric.simulate import HEALTHY_LOSS, Policy
from lgkit.fabric.topology import facebook_fabric, fat_tree
from lgkit.fabric.trace import TraceParams, generate_trace

# 2 pods x 2 ToRs, 4 planes x 2 spines: 8 paths per ToR; at 75% a ToR keeps at least 6. A ToR-agg
# link carries 2 of its ToR's paths, an agg-spine link 1 path of each ToR of its pod.
FABRIC = facebook_fabric(pods=2, tors_per_pod=2, planes=4, spines_per_plane=2)
SIZE = ["--pods", "2", "--tors-per-pod", "2", "--planes", "4", "--spines-per-plane", "2"]
A, D, P, X, Q = (FABRIC.tor_link(*where) for where in
                 ((0, 0, 0), (1, 0, 0), (1, 0, 3), (1, 0, 2), (0, 1, 3)))
B, C, Y, Z = (FABRIC.agg_link(*where) for where in ((0, 1, 0), (0, 2, 0), (1, 1, 0), (1, 2, 0)))
THEIR_ID = {A: 0, D: 8, P: 11, X: 10, Q: 7, B: 20, C: 24, Y: 21, Z: 25}
"""Their numbering: ToR-agg links as ours, agg-spine links 16 + (plane * 2 + spine) * 2 + pod."""
DAY = 86_400
HOUR = 3_600

EVENTS = [  # (second, link, loss rate, repair hours for lgkit's own rule)
    (1 * DAY, A, 2e-3, 96),
    (1 * DAY + HOUR, B, 4e-5, 48),
    (1 * DAY + 2 * HOUR, C, 5e-4, 96),
    (2 * DAY, B, 6e-4, 48),  # B is corrupting: a new loss rate
    (3 * DAY + HOUR, D, 1e-6, 96),
    (5 * DAY, A, 3e-3, 48),  # A is in repair under their rule, back under lgkit's
    (8 * DAY, P, 2e-6, 48),
    (8 * DAY + HOUR, X, 1e-3, 48),
    (8 * DAY + 2 * HOUR, Y, 7e-4, 48),
    (8 * DAY + 3 * HOUR, Z, 8e-4, 96),
    (9 * DAY + 2 * HOUR, Q, 3e-6, 48),
]
END = 15 * DAY  # 4 warm-up days + 11

LG_ROW = {  # nearest tested loss rate on a linear scale: (effective loss, Gb/s)
    4e-5: (5.97e-10, 98.76),  # |4e-5 - 1.43e-5| < |4e-5 - 9.16e-5| (log10 would take 9.16e-5)
    5e-4: (7.56e-9, 98.74),  # nearer 9.16e-5 than 1.16e-3 (log10 would take 1.16e-3)
    6e-4: (7.56e-9, 98.74),
    7e-4: (1.29e-9, 90.88),
    8e-4: (1.29e-9, 90.88),
    1e-3: (1.29e-9, 90.88),
    3e-3: (1.29e-9, 90.88),
}

# Their rule. Repair draws from random.Random(5469321578).randint(1, 100) in disable order:
# 89, 96, 89, 5, 70, 74, 17, 93, 30 (> 80: 4 days, else 2). A second already taken by an
# event moves the new one 1 s later. Their optimizer disables the free links in the iteration
# order of its Python set of corrupting link ids, and a best subset in the order of the set
# built from that subset: {24, 20} iterates 24 (C) first, best subset {10, 25} iterates 25 (Z).
THEIRS = [  # (second, disabled, corrupting {link: loss}) after every event that changes them
    (0, set(), {}),
    (1 * DAY, {A}, {}),  # ToR(0,0) 8 -> 6 paths: disabled; draw 89: back at 5 d, taken -> 5 d + 1 s
    (1 * DAY + HOUR, {A}, {B: 4e-5}),  # ToR(0,0) would drop to 5
    (1 * DAY + 2 * HOUR, {A}, {B: 4e-5, C: 5e-4}),
    (2 * DAY, {A}, {B: 6e-4, C: 5e-4}),  # new loss rate; fast checker says no again
    (3 * DAY + HOUR, {A, D}, {B: 6e-4, C: 5e-4}),  # draw 96: back at 7 d + 1 h
    # 5 d: A fails again while disabled: skipped. 5 d + 1 s: A back; B and C are both free:
    # C draws 89 (4 d -> 9 d + 1 s), B draws 5 (2 d -> 7 d + 1 s).
    (5 * DAY + 1, {D, B, C}, {}),
    (7 * DAY + 1, {D, C}, {}),
    (7 * DAY + HOUR, {C}, {}),
    (8 * DAY, {C, P}, {}),  # draw 70: back at 10 d
    (8 * DAY + HOUR, {C, P}, {X: 1e-3}),
    (8 * DAY + 2 * HOUR, {C, P}, {X: 1e-3, Y: 7e-4}),
    (8 * DAY + 3 * HOUR, {C, P}, {X: 1e-3, Y: 7e-4, Z: 8e-4}),
    (9 * DAY + 1, {P}, {X: 1e-3, Y: 7e-4, Z: 8e-4}),  # C back; pod 1 cannot lose a link
    (9 * DAY + 2 * HOUR, {P, Q}, {X: 1e-3, Y: 7e-4, Z: 8e-4}),  # draw 74: back at 11 d + 2 h
    # 10 d: P back. All three down would leave ToR(1,0) 5 paths; feasible: {X,Z} (X cuts plane
    # 2 from ToR(1,0), so Z no longer counts for it) 1.8e-3, {Y,Z} 1.5e-3, singles: {X,Z}.
    # Z draws 17 (back at 12 d), X draws 93 (back at 14 d).
    (10 * DAY, {Q, X, Z}, {Y: 7e-4}),
    (11 * DAY + 2 * HOUR, {X, Z}, {Y: 7e-4}),
    (12 * DAY, {X}, {Y: 7e-4}),  # ToR(1,0) has 6 paths: Y stays
    (14 * DAY, {Y}, {}),  # ToR(1,0) back to 8: Y is free; draw 30: back after the end
]

# lgkit's rule (the default): each event carries its repair time; at an equal time repairs
# come first, by link id.
OURS = [
    *THEIRS[:6],
    (5 * DAY, {D, B, C}, {}),  # A back at 5 d; B (48 h) and C (96 h, both from their last event)
    (5 * DAY, {D, B, C}, {A: 3e-3}),  # then A fails again: ToR(0,0) would drop to 4
    (7 * DAY, {D, C}, {A: 3e-3}),  # B back; A alone would leave ToR(0,0) 5 paths
    (7 * DAY + HOUR, {C}, {A: 3e-3}),
    (8 * DAY, {C, P}, {A: 3e-3}),
    (8 * DAY + HOUR, {C, P}, {A: 3e-3, X: 1e-3}),
    (8 * DAY + 2 * HOUR, {C, P}, {A: 3e-3, X: 1e-3, Y: 7e-4}),
    (8 * DAY + 3 * HOUR, {C, P}, {A: 3e-3, X: 1e-3, Y: 7e-4, Z: 8e-4}),
    (9 * DAY, {P, A}, {X: 1e-3, Y: 7e-4, Z: 8e-4}),  # C back: A is free (48 h)
    (9 * DAY + 2 * HOUR, {P, A, Q}, {X: 1e-3, Y: 7e-4, Z: 8e-4}),
    (10 * DAY, {A, Q, X, Z}, {Y: 7e-4}),  # X 48 h, Z 96 h
    (11 * DAY, {Q, X, Z}, {Y: 7e-4}),
    (11 * DAY + 2 * HOUR, {X, Z}, {Y: 7e-4}),
    (12 * DAY, {Z, Y}, {}),  # X back: ToR(1,0) has 7 paths, Y is free (48 h)
    (14 * DAY, {Z}, {}),  # Y and Z both back at 14 d: Y (lower id) first
    (14 * DAY, set(), {}),
]


def test_the_documented_repair_stream() -> None:
    stream = random.Random(ARTIFACT_REPAIR_SEED)
    assert [stream.randint(1, 100) for _ in range(9)] == [89, 96, 89, 5, 70, 74, 17, 93, 30]


def test_their_link_numbering() -> None:
    ours = np.array(sorted(THEIR_ID))
    theirs = artifact.to_artifact_links(FABRIC, ours)
    assert theirs.tolist() == [THEIR_ID[link] for link in ours.tolist()]
    assert artifact.from_artifact_links(FABRIC, theirs).tolist() == ours.tolist()
    for fabric in (facebook_fabric(), fat_tree(8)):
        every = np.arange(fabric.n_links)
        mapped = artifact.to_artifact_links(fabric, every)
        assert sorted(mapped.tolist()) == every.tolist()
        assert np.array_equal(artifact.from_artifact_links(fabric, mapped), every)
    big = facebook_fabric()  # their builder: spine by spine of a plane, one link per pod
    assert artifact.to_artifact_links(big, np.array([big.agg_link(7, 2, 5)]))[0] == \
        big.n_tor_links + (2 * 48 + 5) * 261 + 7


def write_fixed_trace(path: Path, with_lgkit_repairs: bool) -> Path:
    document = {
        "name": "fixed", "topo_type": 3,
        "topo_params": {"num_pods": 2, "oversubscription": 1, "link_capacity": 100,
                        "tors_per_pod": 2},
        "num_links": 32, "failure_events_list": [[s, THEIR_ID[link], loss]
                                                 for s, link, loss, _ in EVENTS],
    }
    if with_lgkit_repairs:
        params = TraceParams(seed=1, days=11, warmup_days=4)
        document["lgkit"] = {"params": params.__dict__,
                             "repair_h": [hours for *_, hours in EVENTS]}
    path.write_text(json.dumps(document))
    return path


def least_capacity(disabled: set[int], corrupting: dict[int, float], lg: bool) -> float:
    """Least pod capacity (min of its ToR->agg and agg->spine sums) over a healthy pod's."""
    gbps = {link: LG_ROW[loss][1] if lg else 100.0 for link, loss in corrupting.items()}
    pods = []
    for pod in range(FABRIC.pods):
        down = [FABRIC.tor_link(pod, tor, plane) for tor in range(2) for plane in range(4)]
        up = [FABRIC.agg_link(pod, plane, spine) for plane in range(4) for spine in range(2)]
        layers = [sum(gbps.get(link, 100.0) for link in layer if link not in disabled)
                  for layer in (down, up)]
        pods.append(min(layers))
    return min(pods) / 800.0


@pytest.mark.parametrize("rule, expected", [("artifact", THEIRS), ("trace", OURS)])
def test_fixed_trace_gives_the_expected_corropt_states(
    rule: str, expected: list, tmp_path: Path
) -> None:
    trace = write_fixed_trace(tmp_path / "fixed-trace.json", with_lgkit_repairs=rule == "trace")
    argv = ["fabric", "run", "--trace", str(trace), *SIZE, "--days", "11", "--constraint", "0.75",
            "--solutions", "corropt", "--no-progress", "--out", str(tmp_path / "out")]
    if rule == "artifact":
        argv += ["--repair-draws", "artifact"]
    assert lgkit(argv) == 0
    result = runs.load(runs.find_runs(tmp_path / "out")[0])
    assert result.trace.params.horizon_hours * HOUR == END
    series = result.series[Policy.CORROPT]
    assert np.round(series.time_h * HOUR).astype(int).tolist() == [row[0] for row in expected]
    for row, (_, disabled, corrupting) in enumerate(expected):
        healthy = (FABRIC.n_links - len(disabled) - len(corrupting)) * HEALTHY_LOSS
        enabled = np.ones(FABRIC.n_links, dtype=bool)
        enabled[list(disabled)] = False
        paths = enumerate_paths(FABRIC, enabled).min() / FABRIC.max_paths
        assert series.n_disabled[row] == len(disabled)
        assert series.n_corrupting[row] == len(corrupting)
        assert series.penalty[row, 0] == pytest.approx(sum(corrupting.values()) + healthy,
                                                       rel=1e-12)
        assert series.penalty[row, 1] == pytest.approx(
            sum(LG_ROW[loss][0] for loss in corrupting.values()) + healthy, rel=1e-12)
        assert series.least_paths[row] == paths
        assert series.least_capacity[row, 0] == least_capacity(disabled, corrupting, False)
        assert series.least_capacity[row, 1] == pytest.approx(
            least_capacity(disabled, corrupting, True), rel=1e-12)


def test_the_other_choices_change_the_fixed_trace_as_documented(tmp_path: Path) -> None:
    trace = write_fixed_trace(tmp_path / "fixed-trace.json", with_lgkit_repairs=False)
    base = ["fabric", "run", "--trace", str(trace), *SIZE, "--days", "11", "--constraint", "0.75",
            "--solutions", "corropt", "--no-progress", "--repair-draws", "artifact"]
    assert lgkit([*base, "--lg-lookup", "log", "--out", str(tmp_path / "log")]) == 0
    assert lgkit([*base, "--refailure", "ignore", "--out", str(tmp_path / "ignore")]) == 0
    log = runs.load(runs.find_runs(tmp_path / "log")[0]).series[Policy.CORROPT]
    ignore = runs.load(runs.find_runs(tmp_path / "ignore")[0]).series[Policy.CORROPT]
    # log10: B at 4e-5 takes the 9.16e-5 row, C (5e-4) and B at 6e-4 the 1.16e-3 row.
    healthy = 29 * HEALTHY_LOSS
    assert log.penalty[3, 1] == pytest.approx(7.56e-9 + 1.29e-9 + healthy, rel=1e-12)
    assert log.penalty[4, 1] == pytest.approx(2 * 1.29e-9 + healthy, rel=1e-12)
    # ignore: B keeps 4e-5 after its second onset, which then records no new state.
    assert ignore.penalty[4, 0] == pytest.approx(4e-5 + 5e-4 + healthy, rel=1e-12)
    assert round(ignore.time_h[4] * HOUR) == 3 * DAY + HOUR


def test_trace_written_in_their_format_reads_back(tmp_path: Path) -> None:
    fabric = facebook_fabric(3, 4, 4, 4)
    size = ["--pods", "3", "--tors-per-pod", "4", "--planes", "4", "--spines-per-plane", "4"]
    out = tmp_path / "t.json"
    assert lgkit(["fabric", "trace", "--format", "artifact", "--out", str(out), "--seed", "5",
                  "--days", "40", "--mttf-hours", "300", *size]) == 0
    document = json.loads(out.read_text())
    assert {"name", "topo_type", "topo_params", "num_links", "total_failure_events",
            "first_event_time", "last_event_time", "trace_duration_hrs",
            "failure_events_list"} <= set(document)
    assert document["topo_type"] == 3 and document["topo_params"] == {
        "num_pods": 3, "oversubscription": 1, "link_capacity": 100, "tors_per_pod": 4}
    seconds = [event[0] for event in document["failure_events_list"]]
    assert all(isinstance(second, int) for second in seconds)
    assert seconds == sorted(set(seconds))  # whole, distinct seconds, as their queue needs
    drawn = generate_trace(fabric.n_links, TraceParams(seed=5, days=40, mttf_hours=300))
    assert [event[1] for event in document["failure_events_list"]] == \
        artifact.to_artifact_links(fabric, drawn.link).tolist()
    read = artifact.read_trace(out, fabric, TraceParams())
    assert read.params == drawn.params and np.array_equal(read.link, drawn.link)
    assert np.array_equal(read.loss, drawn.loss) and np.array_equal(read.repair_h, drawn.repair_h)
    assert np.abs(read.time_h - drawn.time_h).max() < 2 / HOUR
    assert lgkit(["fabric", "run", "--trace", str(out), *size, "--no-progress",
                  "--repair-draws", "artifact", "--out", str(tmp_path / "res")]) == 0


def test_colliding_seconds_move_later_in_file_order() -> None:
    assert artifact.unique_seconds([101, 100, 100, 7]).tolist() == [101, 100, 102, 7]


@pytest.mark.parametrize("document, message", [
    ({"topo_type": 3}, "no failure_events_list"),
    ({"topo_type": 9, "topo_params": {}, "failure_events_list": []}, "topo_type 9"),
    ({"topo_type": 3, "topo_params": {"num_pods": 5, "oversubscription": 1, "link_capacity": 100,
                                      "tors_per_pod": 2}, "failure_events_list": []},
     "run with --pods 5 --tors-per-pod 2 --planes 4 --spines-per-plane 2"),
    ({"topo_type": 3, "topo_params": {"num_pods": 2, "oversubscription": 1,
                                      "link_capacity": 100, "tors_per_pod": 2},
      "failure_events_list": [[10, 99, 1e-3]]}, "link ids must be integers in 0..31"),
    ({"topo_type": 3, "topo_params": {"num_pods": 2, "oversubscription": 1,
                                      "link_capacity": 100, "tors_per_pod": 2},
      "failure_events_list": [[10.5, 1, 1e-3]]}, "whole seconds"),
    ({"topo_type": 3, "topo_params": {"num_pods": 2, "oversubscription": 1,
                                      "link_capacity": 100, "tors_per_pod": 2},
      "failure_events_list": [[10, 1, "x"]]}, "[time_s, link_id, loss_rate]"),
])
def test_bad_artifact_traces_name_the_file(document: dict, message: str, tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document))
    with pytest.raises(ValueError) as error:
        artifact.read_trace(path, FABRIC, TraceParams())
    assert str(path) in str(error.value) and message in str(error.value)


def test_a_fabric_their_simulator_cannot_build_is_refused() -> None:
    with pytest.raises(ValueError, match="4 planes"):
        artifact.topology_of(facebook_fabric(2, 4, 3, 4))
    assert artifact.topology_of(fat_tree(4)) == {"topo_type": 1,
                                                  "topo_params": {"k": 4, "link_capacity": 100}}
    assert artifact.fabric_of(artifact.topology_of(fat_tree(4))) == fat_tree(4)
