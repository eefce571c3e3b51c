"""The kernel's view of the host agents' NFQUEUE queues, read from a host's namespace: queue
lengths, drops and packets queued (/proc/net/netfilter/nfnetlink_queue, sampled into a table).

Kernel facts (net/netfilter/nfnetlink_queue.c): `queue_total` is the packets waiting for a
verdict now; `id_sequence` counts the packets sent to the agent's socket; `queue_dropped`
counts packets dropped because the queue held `queue_maxlen`, `user_dropped` those the socket
could not take. With NFQA_CFG_F_FAIL_OPEN (the agents set it) neither is counted: the packet is
accepted unchanged instead. So a full queue shows as `queue_total` at `queue_maxlen`, a full
socket as `id_sequence` above what the agent received (and ENOBUFS at the agent).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lgkit.measure.collect import Periodic
from lgkit.measure.results import RunStore

PROC_COLUMNS = ("queue", "portid", "queue_total", "copy_mode", "copy_range", "queue_dropped",
                "user_dropped", "id_sequence")
"The first columns of a line of /proc/net/netfilter/nfnetlink_queue."
KEPT = ("queue", "queue_total", "queue_dropped", "user_dropped", "id_sequence")


def parse_proc(text: str) -> list[dict[str, int]]:
    """One record per bound queue (the KEPT fields)."""
    found = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= len(PROC_COLUMNS) and all(f.isdigit() for f in fields):
            record = dict(zip(PROC_COLUMNS, map(int, fields), strict=False))
            found.append({k: record[k] for k in KEPT})
    return found


def read_queues(pid: int) -> list[dict[str, int]]:
    """The queues bound in the network namespace of process `pid` (none if it is gone)."""
    try:
        return parse_proc(Path(f"/proc/{pid}/net/netfilter/nfnetlink_queue").read_text())
    except OSError:
        return []


class QueueSampler(Periodic):
    """Appends every bound queue of every host to a table once per interval while a scheme
    runs."""

    def __init__(self, store: RunStore, table: str, pids: dict[str, int],
                 labels: dict[str, Any], interval_s: float = 1.0) -> None:
        super().__init__(interval_s, "nfqueue-sampler")
        self.store, self.table, self.pids, self.labels = store, table, pids, labels
        self.peak: dict[str, int] = {}
        "Host -> the most packets its queues held at one sample."

    def _sample(self) -> None:
        t = self.elapsed_s()
        for host, pid in self.pids.items():
            queues = read_queues(pid)
            held = sum(q["queue_total"] for q in queues)
            self.peak[host] = max(self.peak.get(host, 0), held)
            for queue in queues:
                self.store.append(self.table, {**self.labels, "t_s": t, "host": host, **queue})
