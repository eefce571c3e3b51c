#!/usr/bin/env python3
"""Print the counters of a running switch over P4Runtime: one "LABEL NAME[INDEX] packets=N
bytes=M" line per cell.

  read_counters.py LABEL ADDRESS DEVICE_ID P4INFO COUNTER...
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import p4runtime_lib.bmv2  # noqa: E402
import p4runtime_lib.helper  # noqa: E402
from p4runtime_lib.switch import ShutdownAllSwitchConnections  # noqa: E402


def main():
    label, address, device_id, p4info = sys.argv[1:5]
    helper = p4runtime_lib.helper.P4InfoHelper(p4info)
    sw = p4runtime_lib.bmv2.Bmv2SwitchConnection(address=address, device_id=int(device_id))
    try:
        for name in sys.argv[5:]:
            for response in sw.ReadCounters(helper.get_counters_id(name)):
                for entity in response.entities:
                    entry = entity.counter_entry
                    print(f"{label} {name}[{entry.index.index}] packets={entry.data.packet_count} "
                          f"bytes={entry.data.byte_count}")
    finally:
        ShutdownAllSwitchConnections()


if __name__ == "__main__":
    main()
