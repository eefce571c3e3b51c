"""The clock of untimed runs: virtual time that each packet pass advances by a fixed cost.

Untimed runs (STF, exercise checks, differential tests) never read the wall: a pass starts at the
clock's time (its ingress/egress timestamps) and moves the clock on by `pass_ns`; STF's
`wait DURATION` moves it on explicitly. One clock serves a pipeline's whole untimed session, so
timestamps never go backwards between packets. What one packet and everything it causes
(resubmits, recirculations, clones) may take is bounded in virtual time (`limit_ns`), not in
passes: a packet waiting for any timeout shorter than the bound reaches it, whatever the pass
cost, and a packet that loops forever stops when the bound is reached.
"""

from __future__ import annotations

PASS_NS = 1_000
"One ingress or one egress pass: 1 us, the timestamps' unit (every pass sees its own time)."
LIMIT_NS = 1_000_000_000
"One packet and all it causes: 1 s of virtual time (1,000,000 passes at the default cost)."


class PassClock:
    """Virtual nanoseconds since the session began, advanced by the run itself."""

    def __init__(self, pass_ns: int = PASS_NS, limit_ns: int = LIMIT_NS) -> None:
        if pass_ns < 1 or limit_ns < pass_ns:
            raise ValueError(f"a pass clock needs 1 <= pass_ns <= limit_ns, "
                             f"not {pass_ns} and {limit_ns}")
        self.pass_ns = pass_ns
        self.limit_ns = limit_ns
        self.now_ns = 0

    def now_us(self) -> int:
        """The time in microseconds (v1model's timestamps)."""
        return self.now_ns // 1_000

    def tick(self) -> int:
        """One pass: the time it starts at (microseconds); the clock moves on by its cost."""
        now = self.now_ns // 1_000
        self.now_ns += self.pass_ns
        return now

    def advance(self, ns: int) -> None:
        """Let `ns` nanoseconds pass with no packet in the switch (STF `wait DURATION`)."""
        if ns < 0:
            raise ValueError(f"time cannot go back ({ns} ns)")
        self.now_ns += ns
