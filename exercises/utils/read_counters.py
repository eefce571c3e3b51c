#!/usr/bin/env python3
"""Print the counters of a running switch over P4Runtime: one "LABEL NAME[INDEX] packets=N
bytes=M" line per cell.

  read_counters.py [--settle S] LABEL ADDRESS DEVICE_ID P4INFO COUNTER...

--settle S: first wait until the counters stay the same for S seconds (the switch is quiet: no
packet it counts is still queued in it), at most a minute.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import p4runtime_lib.bmv2  # noqa: E402
import p4runtime_lib.helper  # noqa: E402
from p4runtime_lib.switch import ShutdownAllSwitchConnections  # noqa: E402

SETTLE_LIMIT_S = 60


def read(sw, helper, names):
    cells = []
    for name in names:
        for response in sw.ReadCounters(helper.get_counters_id(name)):
            for entity in response.entities:
                entry = entity.counter_entry
                cells.append((name, entry.index.index, entry.data.packet_count,
                              entry.data.byte_count))
    return cells


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--settle", type=float, default=0.0)
    parser.add_argument("label")
    parser.add_argument("address")
    parser.add_argument("device_id", type=int)
    parser.add_argument("p4info")
    parser.add_argument("counters", nargs="+")
    args = parser.parse_args()
    helper = p4runtime_lib.helper.P4InfoHelper(args.p4info)
    sw = p4runtime_lib.bmv2.Bmv2SwitchConnection(address=args.address, device_id=args.device_id)
    try:
        cells = read(sw, helper, args.counters)
        deadline = time.monotonic() + SETTLE_LIMIT_S
        while args.settle and time.monotonic() < deadline:
            time.sleep(args.settle)
            previous, cells = cells, read(sw, helper, args.counters)
            if cells == previous:
                break
        for name, index, packets, size in cells:
            print(f"{args.label} {name}[{index}] packets={packets} bytes={size}")
    finally:
        ShutdownAllSwitchConnections()


if __name__ == "__main__":
    main()
