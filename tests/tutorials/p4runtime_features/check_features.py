#!/usr/bin/env python3
"""Drive every P4Runtime feature of features.p4 with the helper library; print one
"ok <feature>: <what was seen>" line per feature, or "FAIL <feature>: ..." and exit 1.

  check_features.py ADDRESS DEVICE_ID   (the switch runs with --cpu-port 255)
"""

import os
import queue
import sys
import time

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../utils/"))
import p4runtime_lib.bmv2  # noqa: E402
import p4runtime_lib.helper  # noqa: E402
from p4.v1 import p4runtime_pb2  # noqa: E402

OP_LEARN, OP_MULTICAST, OP_CLONE, OP_METER = 1, 2, 3, 4
MAC_A, MAC_B = "00:00:00:00:00:0a", "00:00:00:00:00:0b"
IDLE_TIMEOUT_NS = 300_000_000


def frame(src):
    return bytes(6) + bytes.fromhex(src.replace(":", "")) + b"\x88\xb5" + b"lgkit" * 10


def packet_in_fields(helper, packet):
    names = {m.id: m.name for m in helper.get("controller_packet_metadata",
                                              name="packet_in").metadata}
    return {names[m.metadata_id]: int.from_bytes(m.value, "big") for m in packet.metadata}


class Check:
    def __init__(self, address, device_id):
        self.helper = p4runtime_lib.helper.P4InfoHelper("build/features.p4.p4info.txtpb")
        self.sw = p4runtime_lib.bmv2.Bmv2SwitchConnection(address=address, device_id=device_id)
        self.sw.MasterArbitrationUpdate()
        self.sw.SetForwardingPipelineConfig(p4info=self.helper.p4info,
                                            bmv2_json_file_path="build/features.json")

    def send(self, op, src=MAC_A):
        self.sw.PacketOut(frame(src), [{"value": op, "bitwidth": 8},
                                       {"value": 0, "bitwidth": 8}])

    def packet_ins(self, count, timeout=5.0):
        return [packet_in_fields(self.helper, self.sw.PacketIn(timeout=timeout))
                for _ in range(count)]

    def write(self, update_type, **entity):
        request = p4runtime_pb2.WriteRequest(device_id=self.sw.device_id)
        request.election_id.low = 1
        update = request.updates.add(type=update_type)
        for field, message in entity.items():
            getattr(update.entity, field).CopyFrom(message)
        self.sw.client_stub.Write(request)

    def packet_io(self):
        self.send(OP_METER)
        (got,) = self.packet_ins(1)
        assert got["op"] == OP_METER and got["instance_type"] == 0, got
        return f"PacketOut op={OP_METER} came back as a PacketIn with {got}"

    def digest_and_idle_timeout(self):
        digest_id = self.helper.get_digests_id("learn_t")
        entry = p4runtime_pb2.DigestEntry(digest_id=digest_id)
        entry.config.max_list_size = 1
        self.write(p4runtime_pb2.Update.INSERT, digest_entry=entry)
        self.send(OP_LEARN, MAC_B)
        (got,) = self.packet_ins(1)
        assert got["hit"] == 0, got
        digest = self.sw.DigestList(timeout=5)
        learned = digest.data[0].struct.members
        assert int.from_bytes(learned[0].bitstring, "big") == int(MAC_B.replace(":", ""), 16)
        self.sw.AckDigestList(digest)
        self.sw.WriteTableEntry(self.helper.buildTableEntry(
            "MyIngress.flows", match_fields={"hdr.ethernet.srcAddr": MAC_B},
            action_name="MyIngress.known", idle_timeout_ns=IDLE_TIMEOUT_NS))
        self.send(OP_LEARN, MAC_B)
        (got,) = self.packet_ins(1)
        assert got["hit"] == 1, got
        last_hit = time.monotonic()
        note = self.sw.IdleTimeoutNotification(timeout=5)
        idle = time.monotonic() - last_hit
        (timed_out,) = note.table_entry
        assert timed_out.idle_timeout_ns == IDLE_TIMEOUT_NS
        assert timed_out.match[0].exact.value.endswith(bytes.fromhex("0b"))
        assert idle >= IDLE_TIMEOUT_NS / 1e9 * 0.9, idle
        return (f"DigestList with {MAC_B}; IdleTimeoutNotification {idle:.2f} s after the "
                f"last hit (idle_timeout_ns={IDLE_TIMEOUT_NS})")

    def multicast(self):
        self.sw.WritePREEntry(self.helper.buildMulticastGroupEntry(
            1, [{"egress_port": 255, "instance": 7}, {"egress_port": 255, "instance": 9}]))
        self.send(OP_MULTICAST)
        rids = sorted(got["rid"] for got in self.packet_ins(2))
        assert rids == [7, 9], rids
        return f"group 1 replicated to the CPU port with egress_rid {rids}"

    def clone(self):
        self.sw.WritePREEntry(self.helper.buildCloneSessionEntry(
            5, [{"egress_port": 255, "instance": 3}]))
        self.send(OP_CLONE)
        copies = sorted((got["instance_type"], got["rid"], got["op"])
                        for got in self.packet_ins(2))
        assert copies == [(0, 0, OP_CLONE), (1, 3, OP_CLONE)], copies
        return f"original and I2E clone (instance_type, rid, op): {copies}"

    def counters(self):
        counter_id = self.helper.get_counters_id("MyIngress.op_counter")
        counts = {}
        for response in self.sw.ReadCounters(counter_id):
            for entity in response.entities:
                counts[entity.counter_entry.index.index] = entity.counter_entry.data.packet_count
        assert counts[OP_LEARN] == 2 and counts[OP_MULTICAST] == 1, counts
        return f"op_counter packets by op: { {k: v for k, v in counts.items() if v} }"

    def meter(self):
        entry = p4runtime_pb2.MeterEntry(meter_id=self.helper.get_meters_id("MyIngress.op_meter"))
        entry.index.index = 0
        entry.config.cir, entry.config.cburst = 1, 1
        entry.config.pir, entry.config.pburst = 2, 2
        self.write(p4runtime_pb2.Update.MODIFY, meter_entry=entry)
        for _ in range(6):
            self.send(OP_METER)
        colors = [got["color"] for got in self.packet_ins(6)]
        assert colors[0] == 0 and 2 in colors, colors
        return f"colors of 6 back-to-back packets at cir 1 pps / pir 2 pps: {colors}"


def main():
    check = Check(sys.argv[1], int(sys.argv[2]))
    failed = False
    for feature in ("packet_io", "digest_and_idle_timeout", "multicast", "clone", "counters",
                    "meter"):
        try:
            print(f"ok {feature}: {getattr(check, feature)()}", flush=True)
        except (AssertionError, queue.Empty) as exc:
            print(f"FAIL {feature}: {type(exc).__name__} {exc}", flush=True)
            failed = True
    check.sw.shutdown()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
