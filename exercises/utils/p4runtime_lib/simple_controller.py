"""Program a switch from an exercise's runtime JSON: pipeline, table entries, PRE entries.

JSON keys: target ("bmv2"), p4info, bmv2_json, table_entries [{table, match, action_name,
action_params, default_action, priority}], multicast_group_entries [{multicast_group_id,
replicas: [{egress_port, instance}]}], clone_session_entries [{clone_session_id, replicas,
packet_length_bytes}].
"""

import argparse
import json
import os
import sys

from . import bmv2, helper


class ConfigError(Exception):
    pass


def check_config(conf, workdir):
    if conf.get("target") != "bmv2":
        raise ConfigError(f"target must be 'bmv2' (got {conf.get('target')!r})")
    for key in ("p4info", "bmv2_json"):
        if not conf.get(key):
            raise ConfigError(f"missing key {key!r}")
        if not os.path.exists(os.path.join(workdir, conf[key])):
            raise ConfigError(f"file does not exist: {os.path.join(workdir, conf[key])}")


def program_switch(addr, device_id, sw_conf_file, workdir, proto_dump_fpath, runtime_json=""):
    conf = json.load(sw_conf_file)
    check_config(conf, workdir)
    p4info = helper.P4InfoHelper(os.path.join(workdir, conf["p4info"]))
    print(f" - connecting to {addr} (device {device_id})")
    sw = bmv2.Bmv2SwitchConnection(address=addr, device_id=device_id,
                                   proto_dump_file=proto_dump_fpath)
    try:
        sw.MasterArbitrationUpdate()
        print(f" - setting pipeline config {conf['bmv2_json']}")
        sw.SetForwardingPipelineConfig(p4info=p4info.p4info, bmv2_json_file_path=os.path.join(
            workdir, conf["bmv2_json"]))
        for flow in conf.get("table_entries", []):
            sw.WriteTableEntry(p4info.buildTableEntry(
                flow["table"], match_fields=flow.get("match"),
                default_action=flow.get("default_action", False),
                action_name=flow["action_name"], action_params=flow.get("action_params"),
                priority=flow.get("priority")))
        for group in conf.get("multicast_group_entries", []):
            sw.WritePREEntry(p4info.buildMulticastGroupEntry(group["multicast_group_id"],
                                                             group["replicas"]))
        for session in conf.get("clone_session_entries", []):
            sw.WritePREEntry(p4info.buildCloneSessionEntry(
                session["clone_session_id"], session["replicas"],
                session.get("packet_length_bytes", 0)))
        print(f" - {len(conf.get('table_entries', []))} table entries installed")
    finally:
        sw.shutdown()


def main():
    parser = argparse.ArgumentParser(description="P4Runtime simple controller")
    parser.add_argument("-a", "--p4runtime-server-addr", required=True)
    parser.add_argument("-d", "--device-id", type=int, required=True)
    parser.add_argument("-p", "--proto-dump-file", required=True)
    parser.add_argument("-c", "--runtime-conf-file", required=True)
    args = parser.parse_args()
    workdir = os.path.dirname(os.path.abspath(args.runtime_conf_file))
    with open(args.runtime_conf_file) as f:
        try:
            program_switch(args.p4runtime_server_addr, args.device_id, f, workdir,
                           args.proto_dump_file)
        except ConfigError as exc:
            sys.exit(f"error: {exc}")


if __name__ == "__main__":
    main()
