"""IEEE 802.1Qbb priority flow control frames, as a port's MAC reads them: the priorities a
frame names and their pause time (quanta of 512 bit times at the port's rate; 0 resumes)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lgkit.sw.exec.jobs import EgressJob

ETHERTYPE_PFC = b"\x88\x08"
OPCODE_PFC = 0x0101
PRIORITIES = 8
QUANTUM_BITS = 512
FRAME_BYTES = 14 + 2 + 2 + 2 * PRIORITIES  # Ethernet header, opcode, class-enable, 8 quanta
DEFAULT_RATE_BPS = 10 * 10**9
"The rate of a port that has none (an unshaped port, an untimed run): 10 Gb/s."


def pfc_quanta(frame: bytes) -> dict[int, int] | None:
    """priority -> pause quanta, for each priority the class-enable vector names; None when the
    frame is not a PFC frame (EtherType 0x8808, opcode 0x0101, at least 34 bytes)."""
    if frame[12:14] != ETHERTYPE_PFC or len(frame) < FRAME_BYTES \
            or int.from_bytes(frame[14:16], "big") != OPCODE_PFC:
        return None
    enabled = int.from_bytes(frame[16:18], "big")
    return {prio: int.from_bytes(frame[18 + 2 * prio:20 + 2 * prio], "big")
            for prio in range(PRIORITIES) if enabled >> prio & 1}


def pause_ns(quanta: int, rate_bps: int) -> int:
    """How long `quanta` pause a port of `rate_bps` (DEFAULT_RATE_BPS when 0), rounded up."""
    return -(-quanta * QUANTUM_BITS * 10**9 // (rate_bps or DEFAULT_RATE_BPS))


class UntimedPause:
    """PFC in an untimed run (no traffic manager): an egress job for a (port, priority) that a
    PFC frame paused waits, behind the ones before it, until the pause ends (its quanta at
    DEFAULT_RATE_BPS) or a quanta-0 frame resumes it; then its egress pass runs."""

    def __init__(self) -> None:
        self.until: dict[tuple[int, int], int] = {}
        self.held: dict[tuple[int, int], list[EgressJob]] = {}

    def receive(self, port: int, frame: bytes, now_ns: int) -> bool:
        """Whether `frame` is a PFC frame (then consumed: it pauses or resumes `port`)."""
        quanta = pfc_quanta(frame)
        if quanta is None:
            return False
        for prio, q in quanta.items():
            self.until[(port, prio)] = now_ns + pause_ns(q, 0)
        return True

    def holds(self, job: EgressJob, now_ns: int) -> bool:
        """Whether `job` must wait (it is then kept, in order)."""
        key = (job.port, job.priority)
        if self.until.get(key, 0) <= now_ns and not self.held.get(key):
            return False
        self.held.setdefault(key, []).append(job)
        return True

    def next_end_ns(self) -> int | None:
        """When the first pause with waiting jobs ends."""
        return min((self.until.get(key, 0) for key, jobs in self.held.items() if jobs),
                   default=None)

    def released(self, now_ns: int) -> list[EgressJob]:
        """The waiting jobs whose pause has ended by `now_ns`, in order per queue."""
        out: list[EgressJob] = []
        for key in sorted(self.held):
            if self.until.get(key, 0) <= now_ns:
                out.extend(self.held.pop(key))
        return out
