#!/usr/bin/env python3
"""The exercise's controller: install a tunnel between h1 (on s1) and h2 (on s2) over
P4Runtime, or read the tunnel counters.

  mycontroller.py install    # pipeline + entries on both switches
  mycontroller.py counters   # print "SWITCH COUNTER[INDEX] packets=N bytes=M" lines
"""

import argparse
import os
import sys

import grpc

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../utils/"))
import p4runtime_lib.bmv2  # noqa: E402
import p4runtime_lib.helper  # noqa: E402
from p4runtime_lib.error_utils import printGrpcError  # noqa: E402
from p4runtime_lib.switch import ShutdownAllSwitchConnections  # noqa: E402

SWITCHES = {"s1": ("127.0.0.1:50051", 0), "s2": ("127.0.0.1:50052", 1)}
HOSTS = {"s1": ("10.0.1.1", "08:00:00:00:01:01"), "s2": ("10.0.2.2", "08:00:00:00:02:02")}
TUNNEL_TO = {"s1": 200, "s2": 100}  # packets for the host on this switch use this tunnel id
UPLINK, HOST_PORT = 2, 1


def install(helper, sw, name, bmv2_json):
    sw.MasterArbitrationUpdate()
    sw.SetForwardingPipelineConfig(p4info=helper.p4info, bmv2_json_file_path=bmv2_json)
    other = "s2" if name == "s1" else "s1"
    ip, mac = HOSTS[name]
    entries = [
        helper.buildTableEntry("MyIngress.ipv4_lpm",
                               match_fields={"hdr.ipv4.dstAddr": (HOSTS[other][0], 32)},
                               action_name="MyIngress.tunnel_ingress",
                               action_params={"dst_id": TUNNEL_TO[other]}),
        helper.buildTableEntry("MyIngress.tunnel_exact",
                               match_fields={"hdr.tunnel.dst_id": TUNNEL_TO[other]},
                               action_name="MyIngress.tunnel_forward",
                               action_params={"port": UPLINK}),
        helper.buildTableEntry("MyIngress.tunnel_exact",
                               match_fields={"hdr.tunnel.dst_id": TUNNEL_TO[name]},
                               action_name="MyIngress.tunnel_egress",
                               action_params={"dstAddr": mac, "port": HOST_PORT}),
    ]
    for entry in entries:
        sw.WriteTableEntry(entry)
    print(f"{name}: pipeline set, {len(entries)} tunnel entries installed")


def counters(helper, sw, name):
    for counter in ("MyIngress.ingressTunnelCounter", "MyIngress.egressTunnelCounter"):
        for index in sorted(TUNNEL_TO.values()):
            for response in sw.ReadCounters(helper.get_counters_id(counter), index):
                for entity in response.entities:
                    data = entity.counter_entry.data
                    print(f"{name} {counter.split('.')[-1]}[{index}] "
                          f"packets={data.packet_count} bytes={data.byte_count}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["install", "counters"])
    parser.add_argument("--p4info", default="build/advanced_tunnel.p4.p4info.txtpb")
    parser.add_argument("--bmv2-json", default="build/advanced_tunnel.json")
    args = parser.parse_args()
    helper = p4runtime_lib.helper.P4InfoHelper(args.p4info)
    try:
        for name, (address, device_id) in SWITCHES.items():
            sw = p4runtime_lib.bmv2.Bmv2SwitchConnection(name=name, address=address,
                                                         device_id=device_id)
            if args.what == "install":
                install(helper, sw, name, args.bmv2_json)
            else:
                counters(helper, sw, name)
    except grpc.RpcError as e:
        printGrpcError(e)
        sys.exit(1)
    finally:
        ShutdownAllSwitchConnections()


if __name__ == "__main__":
    main()
