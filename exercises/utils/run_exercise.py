#!/usr/bin/env python3
"""Start an exercise: the Mininet network of topology.json, one P4 switch process per switch
(BMV2_SWITCH_EXE, started with BMv2's command line), switches programmed from their runtime
JSON (P4Runtime) or CLI file (simple_switch_CLI), then the Mininet CLI (commands on stdin).

topology.json: {"hosts": {"h1": {"ip": "10.0.1.1/24", "mac": "...", "commands": [...]}},
"switches": {"s1": {"runtime_json": "s1-runtime.json" | "cli_input": "s1-commands.txt",
"program": "build/x.json", "cpu_port": 255, "priority_queues": 3}},
"links": [["h1", "s1-p1", "0ms", 10], ["s1-p2", "s2-p2"]]} (latency and Mbit/s optional).
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import time

from mininet.cli import CLI
from mininet.link import TCLink
from mininet.net import Mininet
from mininet.node import Host, Switch
from mininet.topo import Topo

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import p4runtime_lib.simple_controller  # noqa: E402

GRPC_BASE, THRIFT_BASE, START_TIMEOUT_S, BIND_TRIES = 50051, 9090, 30, 20


class ExerciseHost(Host):
    """A host whose interface is eth0, without offloads (checksums are real) or IPv6."""

    def config(self, **params):
        result = super().config(**params)
        intf = self.defaultIntf()
        intf.rename("eth0")
        for feature in ("rx", "tx", "sg"):
            self.cmd(f"ethtool --offload eth0 {feature} off")
        for scope in ("all", "default", "lo"):
            self.cmd(f"sysctl -q -w net.ipv6.conf.{scope}.disable_ipv6=1")
        return result


def listening(port):
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


class P4Switch(Switch):
    """A BMv2-compatible switch process (simple_switch_grpc, simple_switch, or the kit's)."""

    def __init__(self, name, sw_path, json_path, device_id, log_dir, pcap_dir,
                 cpu_port=None, priority_queues=None, **kwargs):
        super().__init__(name, **kwargs)
        self.sw_path, self.json_path, self.device_id = sw_path, json_path, device_id
        self.grpc_port, self.thrift_port = GRPC_BASE + device_id, THRIFT_BASE + device_id
        self.log_file = os.path.join(log_dir, f"{name}.log")
        self.pcap_dir, self.cpu_port, self.priority_queues = pcap_dir, cpu_port, priority_queues
        self.process_id = None

    def command(self):
        words = [self.sw_path]
        for port, intf in sorted(self.intfs.items()):
            if not intf.IP():
                words += ["-i", f"{port}@{intf.name}"]
        words += ["--pcap", self.pcap_dir, "--nanolog", f"ipc:///tmp/bm-{self.device_id}-log.ipc",
                  "--device-id", str(self.device_id)]
        words += [self.json_path] if self.json_path else ["--no-p4"]
        words += ["--log-console", "--thrift-port", str(self.thrift_port)]
        target = []
        if "grpc" in os.path.basename(self.sw_path):
            target += ["--grpc-server-addr", f"127.0.0.1:{self.grpc_port}"]
        if self.cpu_port:
            target += ["--cpu-port", str(self.cpu_port)]
        if self.priority_queues:
            target += ["--priority-queues", str(self.priority_queues)]
        return words + (["--"] + target if target else [])

    def start(self, controllers):
        command = " ".join(self.command())
        print(command)
        for _ in range(BIND_TRIES):  # 50051+ lie in Linux's ephemeral range: an outgoing
            if self.started(command):  # connection may hold one for a while (TIME-WAIT)
                return
            with open(self.log_file) as log:
                if "Address already in use" not in log.read():
                    break
            time.sleep(3.0)
        sys.exit(f"switch {self.name} did not start; see {self.log_file}")

    def started(self, command):
        """Start the switch process; whether it listens within START_TIMEOUT_S."""
        self.process_id = int(self.cmd(f"{command} > {self.log_file} 2>&1 & echo $!").split()[-1])
        port = self.grpc_port if "grpc" in os.path.basename(self.sw_path) else self.thrift_port
        deadline = time.monotonic() + START_TIMEOUT_S
        while not listening(port):
            if not os.path.exists(f"/proc/{self.process_id}") or time.monotonic() > deadline:
                return False
            time.sleep(0.2)
        return True

    def stop(self, deleteIntfs=True):
        if self.process_id:
            self.cmd(f"kill {self.process_id}; wait {self.process_id}")
        super().stop(deleteIntfs)


class ExerciseTopo(Topo):
    def build(self, topo, make_switch):
        for name, params in topo["switches"].items():
            self.addSwitch(name, cls=make_switch(name, params))
        for name, params in topo["hosts"].items():
            self.addHost(name, ip=params["ip"], mac=params["mac"])
        for link in topo["links"]:
            a, b = sorted(link[:2])
            options = {}
            if len(link) > 2 and str(link[2]) not in ("0", "0ms"):
                options["delay"] = link[2] if isinstance(link[2], str) else f"{link[2]}ms"
            if len(link) > 3 and link[3]:
                options["bw"] = link[3]
            node_a, port_a = self.endpoint(a)
            node_b, port_b = self.endpoint(b)
            self.addLink(node_a, node_b, port1=port_a, port2=port_b, **options)

    @staticmethod
    def endpoint(text):
        name, _, port = text.partition("-p")
        return name, (int(port) if port else None)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-t", "--topo", default="topology.json")
    parser.add_argument("-j", "--switch_json", default=None)
    parser.add_argument("-b", "--behavioral-exe", default="simple_switch_grpc")
    parser.add_argument("-l", "--log-dir", default="logs")
    parser.add_argument("-p", "--pcap-dir", default="pcaps")
    args = parser.parse_args()
    with open(args.topo) as f:
        topo = json.load(f)
    for directory in (args.log_dir, args.pcap_dir):
        os.makedirs(directory, exist_ok=True)
    log_dir, pcap_dir = os.path.abspath(args.log_dir), os.path.abspath(args.pcap_dir)
    device_ids = {name: i for i, name in enumerate(topo["switches"])}

    def make_switch(name, params):
        def build(node_name, **kwargs):
            return P4Switch(node_name, args.behavioral_exe,
                            params.get("program", args.switch_json), device_ids[name], log_dir,
                            pcap_dir, params.get("cpu_port"), params.get("priority_queues"),
                            **kwargs)
        return build

    clash = name_clash(topo)
    if clash:
        sys.exit(f"run_exercise.py: error: {clash}")
    net = Mininet(topo=ExerciseTopo(topo=topo, make_switch=make_switch), link=TCLink,
                  host=ExerciseHost, controller=None, autoSetMacs=False)
    try:  # a switch that fails to start still has its links removed (net.stop)
        quiet_switch_ports(net)
        net.start()
        for name, params in topo["hosts"].items():
            for command in params.get("commands", []):
                net.get(name).cmd(command)
        for name, params in topo["switches"].items():
            program(net.get(name), params, log_dir)
        print("Exercise network is up; Mininet CLI follows (commands on stdin).")
        CLI(net)
    finally:
        net.stop()


def name_clash(topo):
    """Why this network cannot be built beside what runs now (an interface of one of its nodes
    exists, or a switch's port is taken), naming the holder; None if nothing is in the way.
    Checked first, since Mininet would stop half-way and leave its first links behind."""
    nodes = [*topo["switches"], *topo["hosts"]]
    for intf in sorted(os.listdir("/sys/class/net")):
        if intf.partition("-eth")[0] in nodes and "-eth" in intf:
            return (f"interface {intf} exists, held by {holder(intf)}: another Mininet network "
                    "uses these names (stop it first; `mn -c` removes a stale one)")
    for device_id in range(len(topo["switches"])):
        for port in (GRPC_BASE + device_id, THRIFT_BASE + device_id):
            if listening(port):
                return f"port {port} of 127.0.0.1 is in use, by {port_holder(port)}"
    return None


def port_holder(port):
    """The listener on a TCP port as `ss` names it, or 'another process'."""
    try:
        done = subprocess.run(["ss", "-Hltnp", f"sport = :{port}"], capture_output=True,
                              text=True, check=False)
    except OSError:
        return "another process"
    return done.stdout.partition("users:")[2].strip() or "another process"


def holder(name):
    """'pid N (command)' of a process whose command line names interface `name` (a switch's
    -i PORT@IF, the Mininet shell of its node), or 'another process'."""
    wanted = (f"@{name}", f"mininet:{name.partition('-eth')[0]}")
    for pid in sorted((p for p in os.listdir("/proc") if p.isdigit()), key=int):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                words = f.read().decode(errors="replace").split("\0")
        except OSError:
            continue
        if int(pid) != os.getpid() and any(w.endswith(wanted) for w in words):
            return f"pid {pid} ({' '.join(words).strip()[:200]})"
    return "another process"


def quiet_switch_ports(net):
    """No IPv6 on the switches' ports (they stay in the root namespace): a BMv2 switch captures
    what the kernel sends out of its ports (router solicitations, MLD reports) as if it had
    arrived there, and would forward it. Done before any switch starts."""
    for switch in net.switches:
        for intf in switch.intfList():
            if intf.name != "lo":
                switch.cmd(f"sysctl -q -w net.ipv6.conf.{intf.name}.disable_ipv6=1")


def program(switch, params, log_dir):
    if "cli_input" in params:
        with open(params["cli_input"]) as commands, \
                open(os.path.join(log_dir, f"{switch.name}_cli_output.log"), "w") as out:
            subprocess.run(["simple_switch_CLI", "--thrift-port", str(switch.thrift_port)],
                           stdin=commands, stdout=out, stderr=subprocess.STDOUT, check=True)
    if "runtime_json" in params:
        print(f"Configuring {switch.name} over P4Runtime with {params['runtime_json']}")
        with open(params["runtime_json"]) as conf:
            p4runtime_lib.simple_controller.program_switch(
                f"127.0.0.1:{switch.grpc_port}", switch.device_id, conf, os.getcwd(),
                os.path.join(log_dir, f"{switch.name}-p4runtime-requests.txt"))


if __name__ == "__main__":
    main()
