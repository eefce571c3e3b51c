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

MAX_WRITE_UPDATES = 10_000
"""Most updates in one Write batch: bounds one RPC's work (about 0.5 s of inserts); the P4Runtime
spec lets a server cap batches, and PI (BMv2) sets no cap at all."""

CUT_MESSAGE_CHARS = 200
"""Longest per-update message (and the first uncovered failure's, in the status message) when a
failed batch's details are cut short."""

CUT_MESSAGES_BYTES = 1500
"Room kept for messages when a failed batch's details are cut short (the first few failures)."


class BatchStatus(grpc.Status):
    """The UNKNOWN status of a failed Write batch: one p4.v1.Error per update, in order.

    Each code-only Error takes ~39 bytes, so a batch of more than ~170 updates cannot carry all
    of them within DETAILS_BUDGET_BYTES. The details then cover the longest prefix of the batch
    that fits beside CUT_MESSAGES_BYTES of messages (index i is still update i for every client),
    and the status message says how many updates failed, which prefix is covered and the first
    failure beyond it. Messages are kept in update order while they fit; the rest are cut (the
    status message says how many)."""

    def __init__(self, results: list[P4RTError | None]) -> None:
        failed = [i for i, r in enumerate(results) if r is not None]
        sizes = [_packed(_error(r)).ByteSize() + 3 for r in results]
        room = DETAILS_BUDGET_BYTES - 200  # for the status message's counts
        covered = len(results) if sum(sizes) <= room else len(results) - 1
        if covered < len(results):  # room for the note on the first uncovered failure
            room -= 150 + 4 * CUT_MESSAGE_CHARS  # (a UTF-8 character takes up to 4 bytes)
            covered = _prefix_within(sizes, room - CUT_MESSAGES_BYTES)
        limit = MAX_MESSAGE_CHARS if covered == len(results) else CUT_MESSAGE_CHARS
        errors = [_error(r) for r in results[:covered]]
        room -= sum(sizes[:covered])
        cut = 0
        for error, result in zip(errors, results, strict=False):
            if result is None:
                continue
            message = _within(bounded(result.message, limit), room - 5)
            if message:
                error.message = message
                room -= len(message.encode()) + 5  # its field, and two length prefixes grown
            else:
                cut += 1
        status = rpc_status.Status(code=code_number(grpc.StatusCode.UNKNOWN),
                                   message=_summary(results, failed, covered, cut))
        status.details.extend(_packed(e) for e in errors)
        self.code = grpc.StatusCode.UNKNOWN
        self.details = status.message
        self.trailing_metadata = (("grpc-status-details-bin", status.SerializeToString()),)


def _within(message: str, size: int) -> str:
    """`message`, shortened by `bounded` until its UTF-8 takes at most `size` bytes; "" when
    it does not fit in 100 characters."""
    limit = len(message)
    while len(message.encode()) > size:
        limit = min(limit, size) * 3 // 4
        if limit < 100:
            return ""
        message = bounded(message, limit)
    return message


def _summary(results: list[P4RTError | None], failed: list[int], covered: int, cut: int) -> str:
    """The status message of a failed batch: counts, the covered prefix, cut messages."""
    message = f"{len(failed)} of {len(results)} updates failed"
    if covered < len(results):
        beyond = [i for i in failed if i >= covered]
        message += (f"; details cover updates 0..{covered - 1} only (gRPC's 8 KiB metadata "
                    f"limit), {len(beyond)} failed after them")
        first = results[beyond[0]] if beyond else None
        if first is not None:
            message += (f", the first is update {beyond[0]}: {first.code.name}: "
                        f"{bounded(first.message, CUT_MESSAGE_CHARS)}")
    if cut:
        message += f" ({cut} messages cut to fit gRPC's metadata limit)"
    return message


def _error(result: P4RTError | None) -> p4r.Error:
    """The code-only p4.v1.Error of one update's result."""
    return p4r.Error(canonical_code=0 if result is None else code_number(result.code))


def _prefix_within(sizes: list[int], budget: int) -> int:
    """How many of `sizes`, from the first, add up to at most `budget`."""
    total = 0
    for count, size in enumerate(sizes):
        total += size
        if total > budget:
            return count
    return len(sizes)


def _packed(error: p4r.Error) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(error)
    return packed
