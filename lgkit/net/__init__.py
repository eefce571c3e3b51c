"""Mininet side of the kit: switch nodes, topologies, corruption injectors, lifecycle, cleanup."""
