"""Packet jobs between the pipeline's passes and the traffic manager, and what each pass returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(slots=True)
class IngressJob:
    """A packet entering ingress again (resubmit, recirculate). `preserved` holds the
    @field_list metadata as (first slot, end slot, values) runs; opaque to the traffic manager
    beyond `data`."""

    data: bytes
    instance_type: int
    preserved: tuple = ()


@dataclass(slots=True)
class EgressJob:
    """A packet copy queued for egress. `length` is its length in bytes (for rate limits);
    `state` is opaque to the traffic manager."""

    port: int
    priority: int
    instance_type: int
    rid: int
    length: int
    state: object


@dataclass(slots=True)
class IngressResult:
    """What ingress asks the traffic manager to do: enqueue `egress` jobs (in order), feed
    `resubmit` back to ingress (high priority); `drops` counts copies dropped here."""

    egress: list[EgressJob]
    resubmit: IngressJob | None
    drops: int


@dataclass(slots=True)
class EgressResult:
    """`out` is (port, bytes) to transmit (truncation applied), `clones` are E2E clone copies
    to enqueue for egress, `recirculate` goes back to ingress; `dropped` if egress dropped it."""

    out: tuple[int, bytes] | None
    clones: list[EgressJob]
    recirculate: IngressJob | None
    dropped: bool


class EgressPass(Protocol):
    """A pipeline's egress pass: one queued job, with the traffic manager's queue values."""

    def __call__(self, job: EgressJob, now_us: int, /, enq_qdepth: int = 0, deq_qdepth: int = 0,
                 enq_timestamp: int = 0, deq_timedelta: int = 0) -> EgressResult: ...
