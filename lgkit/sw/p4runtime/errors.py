"""P4Runtime error values: one exception type carrying a gRPC status code, and batch encoding."""

from __future__ import annotations

import grpc
from finsy.proto import p4r, rpc_status
from google.protobuf import any_pb2

MAX_MESSAGE_CHARS = 1000
"""Longest error message: a message echoing a client's value (a 5 kB key) must still fit gRPC's
8 KiB of trailing metadata, or the client sees RESOURCE_EXHAUSTED instead of the real code."""


class P4RTError(Exception):
    """A request (or one update of a batch) failed with a P4Runtime status code; the message
    is cut to MAX_MESSAGE_CHARS."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        message = bounded(message)
        super().__init__(message)
        self.code = code
        self.message = message


def bounded(message: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """`message`, or its start and end with the middle cut when it is longer than `limit`."""
    if len(message) <= limit:
        return message
    keep = limit - 48  # room for the note
    note = f" ...({len(message) - keep} characters cut)... "
    return message[:keep - keep // 4] + note + message[len(message) - keep // 4:]


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


DETAILS_BUDGET_BYTES = 7500
"""Most bytes of status details a failed Write sends: gRPC clients accept 8 KiB of trailing
metadata by default (grpc.max_metadata_size) and drop the whole status beyond it."""

ERROR_ENTRY_BYTES = 39
"Bytes one p4.v1.Error with a code and no message adds to the details (as a packed Any)."

MAX_WRITE_UPDATES = (DETAILS_BUDGET_BYTES - 100) // ERROR_ENTRY_BYTES // 10 * 10
"""Most updates in one Write batch (180): the statuses of a batch whose every update fails still
fit the budget, so every client gets one p4.v1.Error per update (the P4Runtime contract)."""


class BatchStatus(grpc.Status):
    """The UNKNOWN status of a failed Write batch: one p4.v1.Error per update, in order.

    Every update keeps its code; messages are kept in update order while the details stay within
    DETAILS_BUDGET_BYTES, and the rest are cut (the status message says how many)."""

    def __init__(self, results: list[P4RTError | None]) -> None:
        errors = [p4r.Error(canonical_code=0) if r is None
                  else p4r.Error(canonical_code=code_number(r.code)) for r in results]
        failed = sum(1 for r in results if r is not None)
        status = rpc_status.Status(code=code_number(grpc.StatusCode.UNKNOWN),
                                   message=f"{failed} of {len(results)} updates failed")
        suffix_room = 64  # for the "(N messages cut ...)" note
        size = status.ByteSize() + suffix_room + sum(_packed(e).ByteSize() + 2 for e in errors)
        cut = 0
        for error, result in zip(errors, results, strict=True):
            if result is None:
                continue
            if size + len(result.message.encode()) + 3 <= DETAILS_BUDGET_BYTES:
                error.message = result.message
                size += len(result.message.encode()) + 3
            else:
                cut += 1
        if cut:
            status.message += f" ({cut} messages cut to fit gRPC's metadata limit)"
        status.details.extend(_packed(e) for e in errors)
        self.code = grpc.StatusCode.UNKNOWN
        self.details = status.message
        self.trailing_metadata = (("grpc-status-details-bin", status.SerializeToString()),)


def _packed(error: p4r.Error) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(error)
    return packed
