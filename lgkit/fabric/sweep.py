"""Sweeps of runs (seeds x constraints, all deployment shares per run) on a Dask cluster."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tqdm import tqdm

from lgkit.core.cluster import dask_client
from lgkit.fabric import runs
from lgkit.fabric.runs import RunSpec


def sweep_specs(base: RunSpec, seeds: list[int], constraints: list[float]) -> list[RunSpec]:
    """One spec per (seed, constraint); every deployment share rides along in each run."""
    return [
        replace(base, constraint=constraint, trace=replace(base.trace, seed=seed))
        for seed in seeds
        for constraint in constraints
    ]


def run_sweep(
    specs: list[RunSpec], results_dir: Path, scheduler: str | None = None, workers: int = 2,
    progress: bool = True,
) -> list[Path]:
    """Run the specs on Dask and save each result here as it arrives; returns the run folders."""
    from dask.distributed import as_completed

    folders = []
    with dask_client(scheduler, workers) as client:
        futures = client.map(runs.execute, specs, pure=False)  # type: ignore[attr-defined]
        with tqdm(total=len(futures), unit="run", disable=not progress) as bar:
            for future in as_completed(futures):
                folders.append(runs.save(future.result(), results_dir))
                future.release()
                bar.update(1)
    return sorted(folders)
