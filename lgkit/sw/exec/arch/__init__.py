"""Architectures of the built-in target: one module each, found by the program's package."""
