"""P4Runtime error values: one exception type carrying a gRPC status code, and batch encoding."""

from __future__ import annotations

import grpc
from finsy.proto import p4r, rpc_status
from google.protobuf import any_pb2


class P4RTError(Exception):
    """A request (or one update of a batch) failed with a P4Runtime status code."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def invalid(message: str) -> P4RTError:
    return P4RTError(grpc.StatusCode.INVALID_ARGUMENT, message)


def not_found(message: str) -> P4RTError:
    return P4RTError(grpc.StatusCode.NOT_FOUND, message)


def out_of_range(message: str) -> P4RTError:
    return P4RTError(grpc.StatusCode.OUT_OF_RANGE, message)


def unimplemented(message: str) -> P4RTError:
    return P4RTError(grpc.StatusCode.UNIMPLEMENTED, message)


def code_number(code: grpc.StatusCode) -> int:
    """The canonical integer of a gRPC status code (google.rpc.Code)."""
    return int(code.value[0])


class BatchStatus(grpc.Status):
    """The UNKNOWN status of a failed Write batch: one p4.v1.Error per update, in order."""

    def __init__(self, results: list[P4RTError | None]) -> None:
        status = rpc_status.Status(code=code_number(grpc.StatusCode.UNKNOWN))
        failed = sum(1 for r in results if r is not None)
        status.message = f"{failed} of {len(results)} updates failed"
        for result in results:
            error = p4r.Error(canonical_code=0)
            if result is not None:
                error = p4r.Error(canonical_code=code_number(result.code), message=result.message)
            packed = any_pb2.Any()
            packed.Pack(error)
            status.details.append(packed)
        self.code = grpc.StatusCode.UNKNOWN
        self.details = status.message
        self.trailing_metadata = (("grpc-status-details-bin", status.SerializeToString()),)
