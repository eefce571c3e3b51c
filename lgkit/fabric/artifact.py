"""The authors' simulator (NUS-SNL/linkguardian, `simulator/`): its trace JSON and link numbering.

Its trace is a JSON object whose `failure_events_list` holds `[time_s, link_id, loss_rate]`
rows (whole seconds; no two events at the same second), next to the topology it was drawn
for (`topo_type` 3 = FB fabric with `num_pods`, `tors_per_pod`, `oversubscription`,
`link_capacity`; 1 = fat-tree with `k`, `link_capacity`). It numbers the ToR-agg links as
lgkit does, (pod, ToR, plane) in row-major order, but the agg-spine links (plane, spine, pod):
spine by spine, one link per pod. lgkit adds an `lgkit` key (its trace parameters and repair
times), which the authors' simulator ignores.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from lgkit.fabric.topology import Fabric, facebook_fabric, fat_tree
from lgkit.fabric.trace import Trace, TraceParams, draw_repair_hours
from lgkit.sw.atomic_file import write_atomic

SECONDS_PER_HOUR = 3600
TOPO_FAT_TREE = 1
TOPO_FB_FABRIC = 3
FB_PLANES = 4
"""The authors' FB fabric always has 4 fabric switches per pod and 4 spine planes."""
MAX_SECONDS = 2**53


def unique_seconds(seconds: Iterable[float]) -> np.ndarray:
    """Whole seconds with collisions moved 1 s later, in the given order, as the authors'
    event queue does when events are added to it."""
    used: set[int] = set()
    out = []
    for value in seconds:
        second = int(value)
        while second in used:
            second += 1
        used.add(second)
        out.append(second)
    return np.array(out, dtype=np.int64)


def to_artifact_links(fabric: Fabric, links: np.ndarray) -> np.ndarray:
    """lgkit link ids -> the authors' ids (agg-spine links renumbered (plane, spine, pod))."""
    return _their_ids(fabric)[np.asarray(links, dtype=np.int64)]


def from_artifact_links(fabric: Fabric, links: np.ndarray) -> np.ndarray:
    """The authors' link ids -> lgkit ids (inverse of `to_artifact_links`)."""
    return _our_ids(fabric)[np.asarray(links, dtype=np.int64)]


@functools.cache
def _their_ids(fabric: Fabric) -> np.ndarray:
    """The authors' id of every lgkit link id."""
    pod, plane, spine = np.meshgrid(np.arange(fabric.pods), np.arange(fabric.planes),
                                    np.arange(fabric.spines_per_plane), indexing="ij")
    agg = fabric.n_tor_links + (plane * fabric.spines_per_plane + spine) * fabric.pods + pod
    ids = np.concatenate([np.arange(fabric.n_tor_links), agg.ravel()])
    ids.flags.writeable = False
    return ids


@functools.cache
def _our_ids(fabric: Fabric) -> np.ndarray:
    ids = np.empty(fabric.n_links, dtype=np.int64)
    ids[_their_ids(fabric)] = np.arange(fabric.n_links)
    ids.flags.writeable = False
    return ids


def topology_of(fabric: Fabric) -> dict[str, Any]:
    """`topo_type` and `topo_params` of a fabric, if the authors' simulator can express it."""
    capacity = _plain_number(fabric.link_gbps)
    if fabric.name.startswith("fattree"):
        return {"topo_type": TOPO_FAT_TREE, "topo_params": {"k": fabric.pods,
                                                            "link_capacity": capacity}}
    oversubscription = _plain_number(fabric.tors_per_pod / fabric.spines_per_plane)
    if fabric.planes != FB_PLANES or int(fabric.tors_per_pod / oversubscription) != \
            fabric.spines_per_plane:
        raise ValueError(
            f"the authors' simulator cannot express this fabric ({_describe(fabric)}): its FB "
            f"fabric has {FB_PLANES} planes of tors-per-pod / oversubscription spines")
    return {"topo_type": TOPO_FB_FABRIC, "topo_params": {
        "num_pods": fabric.pods, "oversubscription": oversubscription,
        "link_capacity": capacity, "tors_per_pod": fabric.tors_per_pod}}


def fabric_of(topology: dict[str, Any]) -> Fabric:
    """The lgkit fabric of an artifact `topo_type` / `topo_params` pair."""
    kind, params = topology.get("topo_type"), topology.get("topo_params")
    if not isinstance(params, dict):
        raise ValueError("no topo_params object")
    try:
        if kind == TOPO_FAT_TREE:
            fabric = fat_tree(int(params["k"]))
        elif kind == TOPO_FB_FABRIC:
            tors = int(params["tors_per_pod"])
            spines = int(tors / float(params["oversubscription"]))
            fabric = facebook_fabric(int(params["num_pods"]), tors, FB_PLANES, spines)
        else:
            raise ValueError(f"topo_type {kind!r} is not {TOPO_FAT_TREE} (fat-tree) or "
                             f"{TOPO_FB_FABRIC} (FB fabric)")
        gbps = float(params["link_capacity"])
    except (KeyError, TypeError, ZeroDivisionError, OverflowError) as error:
        raise ValueError(f"bad topo_params {params}: {error!r}") from None
    if not math.isfinite(gbps) or gbps <= 0:
        raise ValueError(f"bad link_capacity {gbps}")
    return Fabric(fabric.name, fabric.pods, fabric.tors_per_pod, fabric.planes,
                  fabric.spines_per_plane, gbps)


def write_trace(trace: Trace, fabric: Fabric, path: Path) -> None:
    """Write `trace` in the authors' JSON format (onsets rounded to distinct whole seconds)."""
    if trace.n_links != fabric.n_links:
        raise ValueError(f"trace has {trace.n_links} links, fabric {fabric.n_links}")
    seconds = unique_seconds(np.round(trace.time_h * SECONDS_PER_HOUR))
    links = to_artifact_links(fabric, trace.link)
    events = [[int(s), int(link), float(loss)]
              for s, link, loss in zip(seconds, links, trace.loss, strict=True)]
    first, last = (int(seconds[0]), int(seconds[-1])) if len(seconds) else (0, 0)
    document = {
        "name": path.stem.removesuffix("-trace"), **topology_of(fabric),
        "num_links": fabric.n_links, "total_failure_events": len(events),
        "first_event_time": first, "last_event_time": last,
        "trace_duration_hrs": last - first,  # seconds, despite the name, as the authors write it
        "failure_events_list": events,
        "lgkit": {"params": asdict(trace.params), "repair_h": trace.repair_h.tolist()},
    }
    write_atomic(path, json.dumps(document, separators=(",", ":")) + "\n")


def read_trace(path: Path, fabric: Fabric, params: TraceParams) -> Trace:
    """Read a trace in the authors' JSON format for `fabric`.

    `params` (seed, period) apply unless the file carries lgkit's own; without lgkit's repair
    times, repair times are drawn from `params.seed`.
    """
    try:
        document = json.loads(path.read_bytes())
    except (ValueError, OSError) as error:
        raise ValueError(f"{path}: not a JSON trace: {error}") from None
    if not isinstance(document, dict) or not isinstance(
            document.get("failure_events_list"), list):
        raise ValueError(f"{path}: not the authors' trace format (no failure_events_list)")
    try:
        traced = fabric_of(document)
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None
    if traced != fabric:
        raise ValueError(f"{path}: the trace is for {_describe(traced)}, not for "
                         f"{_describe(fabric)}; run with {_options(traced)}")
    seconds, links, loss = _events(path, document["failure_events_list"], fabric)
    extra = document.get("lgkit")
    if isinstance(extra, dict):
        params, repair_h = _lgkit_extension(path, extra, len(loss))
    else:
        repair_h = draw_repair_hours(np.random.default_rng([params.seed, 2]), len(loss), params)
    order = np.argsort(seconds, kind="stable")
    return Trace(params, fabric.n_links, seconds[order] / SECONDS_PER_HOUR,
                 from_artifact_links(fabric, links[order]).astype(np.int32), loss[order],
                 repair_h[order])


def _events(path: Path, rows: list, fabric: Fabric) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(distinct seconds, artifact link ids, loss rates) of the rows, validated, in file order."""
    try:
        table = np.array([row[:3] for row in rows], dtype=float).reshape(-1, 3)
    except (TypeError, ValueError, IndexError, KeyError):
        raise ValueError(f"{path}: failure events must be [time_s, link_id, loss_rate] "
                         "numbers") from None
    time_s, links, loss = table.T
    checks = (
        ((time_s >= 0) & (time_s < MAX_SECONDS) & (time_s == np.floor(time_s)),
         "times must be whole seconds >= 0"),
        ((links >= 0) & (links < fabric.n_links) & (links == np.floor(links)),
         f"link ids must be integers in 0..{fabric.n_links - 1}"),
        (np.isfinite(loss) & (loss > 0) & (loss <= 1), "loss rates must be within (0, 1]"),
    )
    for valid, rule in checks:
        if not valid.all():
            bad = int(np.flatnonzero(~valid)[0])
            raise ValueError(f"{path}: failure event {bad} {rows[bad]}: {rule}")
    return unique_seconds(time_s), links.astype(np.int64), loss


def _lgkit_extension(path: Path, extra: dict, count: int) -> tuple[TraceParams, np.ndarray]:
    try:
        params = TraceParams(**extra["params"])
        repair_h = np.array(extra["repair_h"], dtype=float)
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"{path}: bad lgkit section: {error}") from None
    if repair_h.shape != (count,) or not (np.isfinite(repair_h) & (repair_h > 0)).all():
        raise ValueError(f"{path}: lgkit repair_h must hold one positive time per event")
    return params, repair_h


def _plain_number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


def _describe(fabric: Fabric) -> str:
    return (f"{fabric.name} with {fabric.pods} pods x {fabric.tors_per_pod} ToRs, "
            f"{fabric.planes} planes x {fabric.spines_per_plane} spines, "
            f"{fabric.link_gbps:g}G links")


def _options(fabric: Fabric) -> str:
    if fabric.name.startswith("fattree"):
        return f"--topology fattree --k {fabric.pods}"
    return (f"--pods {fabric.pods} --tors-per-pod {fabric.tors_per_pod} "
            f"--planes {fabric.planes} --spines-per-plane {fabric.spines_per_plane}")
