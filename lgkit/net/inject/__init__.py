"""Corruption injectors and the loss models they follow."""
