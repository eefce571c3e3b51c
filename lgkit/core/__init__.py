"""Building blocks below every room: processes and their names, topology data, frames, Dask."""
