"""Spec files: topologies and scenarios read from YAML."""
