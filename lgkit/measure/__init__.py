"""Measurements: the per-run results store, loss metrics and counter collectors."""
