"""Architectures of the built-in target: one module each."""
