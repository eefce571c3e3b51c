"""A p4runtime-shell batch (in .venv-p4rt): 1000 inserts into basic.p4's dmac, then again.

Usage: shell_batch.py GRPC_ADDR P4INFO_TXT DEVICE_CONFIG_JSON
Prints JSON: the first Write's outcome and, for the second, the shell's (index, code) errors
and its message.
"""

import json
import sys

import p4runtime_sh.shell as sh
from p4.v1 import p4runtime_pb2
from p4runtime_sh.p4runtime import P4RuntimeWriteException

ADDR, P4INFO, DEVICE_CONFIG = sys.argv[1], sys.argv[2], sys.argv[3]
COUNT = 1000


def batch() -> p4runtime_pb2.WriteRequest:
    request = p4runtime_pb2.WriteRequest()
    for i in range(COUNT):
        entry = sh.TableEntry("MyIngress.dmac")(action="MyIngress.set_port")
        entry.match["hdr.ethernet.dstAddr"] = str(i + 1)
        entry.action["port"] = "2"
        update = request.updates.add(type=p4runtime_pb2.Update.INSERT)
        update.entity.table_entry.CopyFrom(entry.msg())
    return request


def main() -> dict:
    results = {}
    sh.setup(device_id=1, grpc_addr=ADDR, election_id=(0, 1),
             config=sh.FwdPipeConfig(P4INFO, DEVICE_CONFIG), verbose=False)
    try:
        sh.client.write(batch())
        results["first"] = "OK"
        try:
            sh.client.write(batch())
            results["second"] = "OK"
        except P4RuntimeWriteException as exc:
            results["second"] = [[idx, error.canonical_code] for idx, error in exc.errors]
            results["text"] = str(exc)
    finally:
        sh.teardown()
    return results


if __name__ == "__main__":
    print(json.dumps(main()))
