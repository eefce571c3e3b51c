"""Mininet switch nodes that run a P4Runtime switch process: BMv2 or the kit's built-in target."""

from __future__ import annotations

import functools
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from mininet.node import Switch

from lgkit.core import naming
from lgkit.core.child import stop_process
from lgkit.sw.switch.control_service import CommandError, ControlClient

GRPC_BASE_PORT = 9559
"""Switch k (device id k) serves P4Runtime on 127.0.0.1:GRPC_BASE_PORT + k. 9559 is P4Runtime's
IANA port, and it lies below Linux's ephemeral range (32768-60999 by default), so the kernel
never hands these ports to outgoing connections: with 50051 + k, a testbed started after many
loopback connections once found 50054 taken ("Address already in use")."""

THRIFT_BASE_PORT = 9090
"BMv2 only: switch k serves its runtime CLI (Thrift) on THRIFT_BASE_PORT + k."

CPU_PORT = 510
"P4Runtime packet-in/out port of every switch."

BMV2_QUIET = ("--log-level", "off")
"""BMv2's options when it does not log to the console. Its default level is trace, and without
a log sink it still formats every line (spdlog formats before its null sink drops the text):
on the LG testbed (Fig. 7 at 10 Mb/s) that halved what each switch forwards per CPU second
(docs/bmv2.md, "Where BMv2's CPU goes")."""


class TargetUnavailable(RuntimeError):
    """The selected target's switch program is not installed."""


class SwitchError(RuntimeError):
    """A switch process did not start (the message has its log) or refused a command."""


@dataclass(frozen=True)
class Flavour:
    """How to start one kind of P4Runtime switch; everything else is shared."""

    name: str
    "builtin | bmv2"

    def command(self) -> list[str]:
        """The program to start, or TargetUnavailable with the reason."""
        if self.name == "builtin":
            return [sys.executable, "-m", "lgkit.cli", "switch"]
        binary = shutil.which("simple_switch_grpc")
        if binary is None:
            raise TargetUnavailable("bmv2: simple_switch_grpc is not installed (not on PATH)")
        if not has_thrift(binary):
            raise TargetUnavailable("bmv2: simple_switch_grpc was built without Thrift "
                                    "(--with-thrift): the kit needs its runtime CLI "
                                    "(simple_switch_CLI) for queue rates and depths")
        return [binary]

    def argv(self, ports: list[tuple[int, str]], device_id: int, priority_queues: int,
             log_console: bool, pcap_dir: Path | None) -> list[str]:
        """Full command line; BMv2 takes its target options after `--`."""
        general = [arg for port, iface in ports for arg in ("-i", f"{port}@{iface}")]
        general += ["--device-id", str(device_id), "--no-p4"]
        if log_console:
            general.append("--log-console")
        elif self.name == "bmv2":
            general += list(BMV2_QUIET)
        if pcap_dir is not None:
            general += ["--pcap", str(pcap_dir)]
        target = ["--grpc-server-addr", grpc_address(device_id), "--cpu-port", str(CPU_PORT)]
        if priority_queues > 1:
            target += ["--priority-queues", str(priority_queues)]
        if self.name == "bmv2":
            general += ["--thrift-port", str(THRIFT_BASE_PORT + device_id)]
            return self.command() + general + ["--"] + target
        return self.command() + general + target

    def run_cli(self, device_id: int, commands: list[str], timeout: float) -> str:
        """Run runtime-CLI commands (set_queue_rate, set_port_rate, mirroring_add, mc_*):
        BMv2 through simple_switch_CLI, the built-in switch through its control service (what
        `lgkit switch-cli --grpc-server-addr` uses), in process."""
        if self.name == "builtin":
            client = ControlClient(grpc_address(device_id), timeout_s=timeout)
            try:
                return "".join(client.run(line) + "\n" for line in commands)
            except (CommandError, ConnectionError) as exc:
                raise RuntimeError(str(exc)) from exc
            finally:
                client.close()
        argv = ["simple_switch_CLI", "--thrift-port", str(THRIFT_BASE_PORT + device_id)]
        done = subprocess.run(argv, input="\n".join(commands), capture_output=True, text=True,
                              timeout=timeout, check=False)
        if done.returncode != 0:
            raise RuntimeError(done.stderr.strip())
        return done.stdout


FLAVOURS = {"builtin": Flavour("builtin"), "bmv2": Flavour("bmv2")}


@functools.cache
def has_thrift(binary: str) -> bool:
    """Whether a BMv2 switch binary serves the Thrift runtime (it then takes --thrift-port)."""
    done = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=30,
                          check=False)
    return "--thrift-port" in done.stdout + done.stderr


def grpc_address(device_id: int) -> str:
    """P4Runtime address of the switch with this device id."""
    return f"127.0.0.1:{GRPC_BASE_PORT + device_id}"


def wait_for_port(address: str, timeout: float, alive: subprocess.Popen) -> bool:
    """Wait until a TCP server accepts on address; False if the process died or time ran out."""
    host, port = address.rsplit(":", 1)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if alive.poll() is not None:
            return False
        try:
            with socket.create_connection((host, int(port)), timeout=0.2):
                return True
        except OSError:
            time.sleep(0.05)
    return False


class P4Switch(Switch):
    """A P4Runtime switch process bound to this node's interfaces (one class, two flavours)."""

    def __init__(self, name: str, target: str = "builtin", device_id: int = 1,
                 priority_queues: int = 3, log_dir: str = "/tmp", pcap_dir: str | None = None,
                 log_console: bool = False, **params) -> None:
        super().__init__(name, **params)
        self.flavour = FLAVOURS[target]
        self.device_id = device_id
        self.priority_queues = priority_queues
        self.log_path = Path(log_dir) / f"{name}.log"
        self.pcap_dir = Path(pcap_dir) if pcap_dir else None
        self.log_console = log_console
        self.process: subprocess.Popen | None = None
        self.argv: list[str] = []

    @property
    def grpc_address(self) -> str:
        """Where this switch serves P4Runtime."""
        return grpc_address(self.device_id)

    def port_map(self) -> list[tuple[int, str]]:
        """(port number, interface name) of every data port."""
        return sorted((self.ports[intf], intf.name) for intf in self.intfList()
                      if intf.name != "lo")

    def start(self, controllers) -> None:
        """Start the switch process (`wait_ready` waits for its P4Runtime server)."""
        for _, iface in self.port_map():
            disable_ipv6(iface)
        argv = self.flavour.argv(self.port_map(), self.device_id, self.priority_queues,
                                 self.log_console, self.pcap_dir)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("w") as log:
            self.process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, start_new_session=True)
        naming.write_pid("switch", self.name, self.process.pid)
        self.argv = argv

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Wait until the P4Runtime server accepts connections; raise with the log if it dies."""
        assert self.process is not None, "switch not started"
        if not wait_for_port(self.grpc_address, timeout, self.process):
            tail = self.log_path.read_text()[-2000:]
            self.stop_process()
            command = " ".join(self.argv)
            raise SwitchError(f"switch {self.name} did not start ({command}):\n{tail}")

    def stop_process(self) -> None:
        """Terminate the switch process (SIGTERM, then SIGKILL after 3 s)."""
        if self.process is None:
            return
        stop_process(self.process, 3.0, naming.pid_file("switch", self.name))
        self.process = None

    def stop(self, deleteIntfs: bool = True) -> None:  # noqa: N803 (Mininet's signature)
        """Stop the process, then let Mininet remove the interfaces."""
        self.stop_process()
        super().stop(deleteIntfs)

    def switch_cli(self, commands: list[str], timeout: float = 20.0) -> str:
        """Run runtime-CLI commands (BMv2's runtime_CLI syntax) against this switch."""
        try:
            return self.flavour.run_cli(self.device_id, commands, timeout)
        except RuntimeError as exc:
            raise SwitchError(f"switch-cli on {self.name} failed: {exc}") from exc


def disable_ipv6(iface: str) -> None:
    """Keep the kernel from sending IPv6 ND/MLD frames out of a switch port."""
    Path(f"/proc/sys/net/ipv6/conf/{iface}/disable_ipv6").write_text("1")
