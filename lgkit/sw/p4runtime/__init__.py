"""P4Runtime server of the built-in target (P4Runtime 1.5 over grpcio with finsy's protos)."""

from .server import P4RuntimeServer

__all__ = ["P4RuntimeServer"]
