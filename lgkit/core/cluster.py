"""A Dask client for sweeps: of a given scheduler, or of a local cluster of worker processes."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def dask_client(scheduler: str | None, workers: int) -> Iterator[object]:
    """A client of the given scheduler, or of a local process cluster with `workers` workers."""
    from dask.distributed import Client, LocalCluster

    if scheduler:
        with Client(scheduler) as client:  # type: ignore[no-untyped-call]
            yield client
        return
    cluster = LocalCluster(  # type: ignore[no-untyped-call]
        n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
    with cluster, Client(cluster) as client:  # type: ignore[no-untyped-call]
        yield client
