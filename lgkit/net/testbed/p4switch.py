"""Mininet switch nodes that run a P4Runtime switch process: BMv2 or the kit's built-in target."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

from mininet.node import Switch

from lgkit.core import naming
from lgkit.core.child import stop_process
from lgkit.core.targets import DEFAULT_TARGET, grpc_address, target_kind


class SwitchError(RuntimeError):
    """A switch process did not start (the message has its log) or refused a command."""


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
    """A P4Runtime switch process bound to this node's interfaces (the target says which)."""

    def __init__(self, name: str, target: str = DEFAULT_TARGET, device_id: int = 1,
                 priority_queues: int = 3, log_dir: str = "/tmp", pcap_dir: str | None = None,
                 log_console: bool = False, **params) -> None:
        super().__init__(name, **params)
        self.kind = target_kind(target)
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
        argv = self.kind.switch_argv(self.port_map(), self.device_id, self.priority_queues,
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
            return self.kind.run_cli(self.device_id, commands, timeout)
        except RuntimeError as exc:
            raise SwitchError(f"switch-cli on {self.name} failed: {exc}") from exc


def disable_ipv6(iface: str) -> None:
    """Keep the kernel from sending IPv6 ND/MLD frames out of a switch port."""
    Path(f"/proc/sys/net/ipv6/conf/{iface}/disable_ipv6").write_text("1")
