"""Table idle timeout: entries not hit for their idle_timeout_ns, as IdleTimeoutNotifications.

A table with `support_timeout = true` stamps `entry.last_hit_us` on every hit (the switch clock).
An entry whose idle time reaches its `idle_timeout_ns` is reported once; a hit re-arms it. The
entry stays in the table: removing it is the controller's decision (P4Runtime spec, "Idle
timeout"). Only the primary client is told.
"""

from __future__ import annotations

from finsy.proto import p4i, p4r

from .state import DeviceState
from .tables import encode_entry

CHECK_PERIOD_S = 0.05


def expired(state: DeviceState, now_us: int) -> list[p4r.TableEntry]:
    """Entries idle for at least their timeout and not yet reported since their last hit.

    Only the entries with a timeout set are visited (each table's `timed`), from a snapshot:
    the scan takes no switch lock, a hit landing meanwhile re-arms its entry as usual."""
    found = []
    for info in state.index.tables.values():
        if info.idle_timeout_behavior != p4i.Table.NOTIFY_CONTROL:
            continue
        table = state.pipeline.tables[info.preamble.name]
        if not table.timed:
            continue
        for entry in list(table.timed.values()):
            last_hit_us = entry.last_hit_us
            if entry.idle_reported_at_hit == last_hit_us:
                continue
            if now_us - last_hit_us >= entry.idle_timeout_ns // 1000:
                entry.idle_reported_at_hit = last_hit_us
                msg = encode_entry(state, info, entry, p4r.TableEntry())
                msg.idle_timeout_ns = entry.idle_timeout_ns
                found.append(msg)
    return found


def notification(entries: list[p4r.TableEntry], timestamp_ns: int) -> p4r.StreamMessageResponse:
    note = p4r.IdleTimeoutNotification(table_entry=entries, timestamp=timestamp_ns)
    return p4r.StreamMessageResponse(idle_timeout_notification=note)
