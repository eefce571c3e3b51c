"""A p4runtime-shell session (run in .venv-p4rt) against a P4Runtime server; prints JSON results.

Usage: shell_session.py GRPC_ADDR P4INFO_TXT DEVICE_CONFIG_JSON CPU_PORT
Loads the pipeline, inserts table entries, reads them back, reads a counter, does a packet-out
to the CPU port and collects the packet-in, then checks that a bad write fails with its code.
"""

import json
import sys

import p4runtime_sh.shell as sh
from p4runtime_sh.p4runtime import P4RuntimeWriteException

ADDR, P4INFO, DEVICE_CONFIG, CPU_PORT = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
PAYLOAD = bytes.fromhex("0000000000aa" "0000000000bb" "0800") + bytes(50)


def main() -> dict:
    results = {}
    sh.setup(device_id=1, grpc_addr=ADDR, election_id=(0, 1),
             config=sh.FwdPipeConfig(P4INFO, DEVICE_CONFIG), verbose=False)
    try:
        entry = sh.TableEntry("PktIngress.dmac")(action="PktIngress.set_port")
        entry.match["hdr.ethernet.dstAddr"] = "00:00:00:00:00:aa"
        entry.action["port"] = "2"
        entry.insert()
        acl = sh.TableEntry("PktIngress.acl")(action="PktIngress.set_port")
        acl.match["hdr.ethernet.etherType"] = "0x0800&&&0xffff"
        acl.action["port"] = "1"
        acl.priority = 7
        acl.insert()
        results["dmac"] = [
            {"dst": e.match["hdr.ethernet.dstAddr"].exact.value.hex(),
             "port": e.action["port"].value.hex()}
            for e in sh.TableEntry("PktIngress.dmac").read()]
        results["acl_priorities"] = [e.priority for e in sh.TableEntry("PktIngress.acl").read()]

        packet_in = sh.PacketIn()
        sh.PacketOut(PAYLOAD, egress_port=str(CPU_PORT), tag="41", pad="0").send()
        received = list(packet_in.sniff(timeout=5))
        results["packet_in"] = [
            {"payload": m.packet.payload.hex(),
             "metadata": {str(md.metadata_id): md.value.hex() for md in m.packet.metadata}}
            for m in received]

        counter = sh.CounterEntry("PktIngress.port_counter")
        counter.index = CPU_PORT
        results["counter"] = [{"packets": c.packet_count, "bytes": c.byte_count}
                              for c in counter.read()]

        try:
            entry.insert()
            results["duplicate_insert"] = "OK"
        except P4RuntimeWriteException as exc:
            results["duplicate_insert"] = [p4_error.canonical_code for _, p4_error in exc.errors]
    finally:
        sh.teardown()
    return results


if __name__ == "__main__":
    print(json.dumps(main()))
