"""Congestion-loss schemes beside LinkGuardian: Vertigo and PABO (host sides, control planes)."""
