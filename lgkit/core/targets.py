"""Target kinds as classes (built-in, BMv2, Linux bridge): how each starts, is configured and
what it supports; TARGETS maps the names used on command lines to them."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import ClassVar

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

UNKNOWN_COMMAND = re.compile(r"\*\*\* Unknown syntax: (.*)")
"What simple_switch_CLI prints for a command it does not have."

TESTBED_TOOLS = ("mnexec", "iperf3", "nft", "ip", "ethtool", "brctl")
"What every Mininet testbed needs on PATH, whatever the target."


class TargetUnavailable(RuntimeError):
    """The selected target's switch program is not installed."""


class BuildError(RuntimeError):
    """The program did not compile (the message holds the compiler's output)."""


def grpc_address(device_id: int) -> str:
    """P4Runtime address of the switch with this device id."""
    return f"127.0.0.1:{GRPC_BASE_PORT + device_id}"


def check_tools(*tools: str) -> list[str]:
    """The tools of `tools` that are not on PATH."""
    return [tool for tool in tools if shutil.which(tool) is None]


@functools.cache
def has_thrift(binary: str) -> bool:
    """Whether a BMv2 switch binary serves the Thrift runtime (it then takes --thrift-port)."""
    done = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=30,
                          check=False)
    return "--thrift-port" in done.stdout + done.stderr


class Target:
    """A kind of switch the testbed runs. Subclasses set the facts and override what differs."""

    name: ClassVar[str]
    "The name on command lines and in run folders."
    runs_p4: ClassVar[bool] = True
    "False for switches that forward without a P4 program (no LinkGuardian)."
    tools: ClassVar[tuple[str, ...]] = ()
    "Programs this target needs on PATH (beyond TESTBED_TOOLS)."
    install_hint: ClassVar[str] = "not on PATH"
    "What to tell a user whose machine lacks `tools`."
    link_rate_mbps: ClassVar[float | None] = None
    """Default link rate of the testbed: what one switch process forwards with LinkGuardian on
    (every protected packet also loops through recirculation until acknowledged) on 2 shared
    cores; None: not limited by the kit."""
    queue_depth: ClassVar[int] = 0
    """Packets per port queue on the testbed (0: the kit sets none). It absorbs the scheduling
    hiccups of software switches on a busy host and the bursts LinkGuardian lets out at once:
    the sender's hold (its stand-in for a paused queue) and the receiver's reordering buffer can
    each release what they hold, up to the built-in switch's recirculation capacity (1024
    packets), and a software switch's recovery takes tens of ms, hundreds of packets at 50-75
    Mb/s. At 256 those releases overflowed the LG sender's protected port and the receiver's
    port onward: packets lost before LG numbered them or after it delivered them, which it
    cannot recover (docs/performance.md, 2026-11-28). The hosts' tbf is the bottleneck
    (Testbed's HOST_SHARE), so the queues are short otherwise. BMv2 (at most a few Mb/s) keeps
    256, as measured there (docs/bmv2.md)."""
    min_timeout_us: ClassVar[int] = 250_000
    "LinkGuardian's ackNoTimeout floor on this target (lgprotection.ack_timeout_us says why)."
    recirc_rate_share: ClassVar[float | None] = None
    """Queue rate of LG's recirculation port as a multiple of the link's frame rate; None:
    unlimited (lgprotection.recirc_rate_lines)."""
    reports_drops: ClassVar[bool] = False
    "The switch tells its drops by cause and its pipeline passes (show_drops, show_passes)."

    def missing(self) -> str | None:
        """Why this target cannot run here (its tools missing), or None."""
        absent = check_tools(*self.tools)
        if absent:
            return f"{self.name}: {', '.join(absent)} not installed ({self.install_hint})"
        return None

    def compile_argv(self, source: Path, out_dir: Path, p4info: Path) -> list[str]:
        """The command that compiles `source` into out_dir (P4Info at `p4info`)."""
        raise BuildError(f"{self.name}: runs no P4 program")

    def switch_command(self) -> list[str]:
        """The switch program to start, or TargetUnavailable with the reason."""
        raise TargetUnavailable(f"{self.name}: runs no switch process")

    def switch_argv(self, ports: list[tuple[int, str]], device_id: int, priority_queues: int,
                    log_console: bool, pcap_dir: Path | None) -> list[str]:
        """Full command line of a switch process on these (port, interface) pairs."""
        general = [arg for port, iface in ports for arg in ("-i", f"{port}@{iface}")]
        general += ["--device-id", str(device_id), "--no-p4"]
        general += self.log_options(log_console)
        if pcap_dir is not None:
            general += ["--pcap", str(pcap_dir)]
        target = ["--grpc-server-addr", grpc_address(device_id), "--cpu-port", str(CPU_PORT)]
        if priority_queues > 1:
            target += ["--priority-queues", str(priority_queues)]
        return self.switch_command() + general + self.target_options(device_id) + target

    def log_options(self, log_console: bool) -> list[str]:
        """The switch's logging options: to the console, or the switch's default."""
        return ["--log-console"] if log_console else []

    def target_options(self, device_id: int) -> list[str]:
        """What comes between the general options and the target's own (gRPC, CPU port)."""
        return []

    def run_cli(self, device_id: int, commands: list[str], timeout: float) -> str:
        """Run runtime-CLI lines (BMv2's runtime_CLI syntax) against switch `device_id`;
        RuntimeError with the switch's reason if it refuses."""
        raise RuntimeError(f"{self.name}: has no runtime CLI")

    def port_commands(self, ports: list[int], rate_mbps: float) -> list[str]:
        """Runtime-CLI lines that cap every port at rate_mbps and give its queues
        `queue_depth` packets."""
        return [f"set_queue_depth {self.queue_depth} {port}" for port in ports]


class Builtin(Target):
    """The kit's own Python P4 target (`lgkit switch`)."""

    name = "builtin"
    link_rate_mbps = 10.0
    queue_depth = 1024
    min_timeout_us = 250_000
    reports_drops = True

    def compile_argv(self, source: Path, out_dir: Path, p4info: Path) -> list[str]:
        return [sys.executable, "-m", "lgkit.cli", "compile", str(source), "--out", str(out_dir)]

    def switch_command(self) -> list[str]:
        """`lgkit switch` on the native engine (LGKIT_ENGINE names another; a program the native
        engine does not cover runs on the python engine, the switch's log saying why)."""
        from lgkit.sw.exec.pipeline import ENGINE_ENV

        engine = os.environ.get(ENGINE_ENV) or "native"
        return [sys.executable, "-m", "lgkit.cli", "switch", "--engine", engine]

    def run_cli(self, device_id: int, commands: list[str], timeout: float) -> str:
        """Through the switch's control service (what `lgkit switch-cli --grpc-server-addr`
        uses), in process."""
        from lgkit.sw.switch.control_service import CommandError, ControlClient

        client = ControlClient(grpc_address(device_id), timeout_s=timeout)
        try:
            return "".join(client.run(line) + "\n" for line in commands)
        except (CommandError, ConnectionError) as exc:
            raise RuntimeError(str(exc)) from exc
        finally:
            client.close()

    def port_commands(self, ports: list[int], rate_mbps: float) -> list[str]:
        return super().port_commands(ports, rate_mbps) + [
            f"set_port_rate {round(rate_mbps * 1e6)} {port}" for port in ports]


class Bmv2(Target):
    """BMv2 simple_switch_grpc, compiled by p4c, configured through simple_switch_CLI."""

    name = "bmv2"
    tools = ("simple_switch_grpc", "simple_switch_CLI", "p4c")
    install_hint = "BMv2 and p4c come with the Vagrant VM; use --target builtin here"
    link_rate_mbps = 2.5
    """`lgkit reproduce lgrate --target bmv2` found 2.8 Mb/s the highest rate with no effective
    loss at 1e-2 corruption and LG's goodput within 10% of no loss (docs/bmv2.md); 2.5 leaves
    a margin for a busy machine."""
    queue_depth = 256
    min_timeout_us = 2_000_000
    recirc_rate_share = 4.0

    def compile_argv(self, source: Path, out_dir: Path, p4info: Path) -> list[str]:
        p4c = shutil.which("p4c") or shutil.which("p4c-bm2-ss")
        if p4c is None:
            raise BuildError("bmv2: p4c is not installed (not on PATH)")
        return [p4c, "--target", "bmv2", "--arch", "v1model", "--p4runtime-files", str(p4info),
                "-o", str(out_dir), str(source)]

    def switch_command(self) -> list[str]:
        binary = shutil.which("simple_switch_grpc")
        if binary is None:
            raise TargetUnavailable("bmv2: simple_switch_grpc is not installed (not on PATH)")
        if not has_thrift(binary):
            raise TargetUnavailable("bmv2: simple_switch_grpc was built without Thrift "
                                    "(--with-thrift): the kit needs its runtime CLI "
                                    "(simple_switch_CLI) for queue rates and depths")
        return [binary]

    def log_options(self, log_console: bool) -> list[str]:
        return super().log_options(log_console) or list(BMV2_QUIET)

    def target_options(self, device_id: int) -> list[str]:
        """The Thrift port of its runtime CLI; its target options come after `--`."""
        return ["--thrift-port", str(THRIFT_BASE_PORT + device_id), "--"]

    def run_cli(self, device_id: int, commands: list[str], timeout: float) -> str:
        argv = ["simple_switch_CLI", "--thrift-port", str(THRIFT_BASE_PORT + device_id)]
        done = subprocess.run(argv, input="\n".join(commands), capture_output=True, text=True,
                              timeout=timeout, check=False)
        if done.returncode != 0:
            raise RuntimeError(done.stderr.strip())
        # simple_switch_CLI exits 0 after a command it does not know: the built-in target's
        # set_port_rate once left BMv2's ports at their old rate without a word
        unknown = UNKNOWN_COMMAND.search(done.stdout)
        if unknown:
            raise RuntimeError(f"BMv2's runtime CLI does not know {unknown.group(1)!r}")
        return done.stdout

    def port_commands(self, ports: list[int], rate_mbps: float) -> list[str]:
        """The queue rate in 1500-byte packets per second."""
        pps = max(1, round(rate_mbps * 1e6 / (8 * 1500)))
        return super().port_commands(ports, rate_mbps) + [
            f"set_queue_rate {pps} {port}" for port in ports]


class LinuxBridge(Target):
    """Linux bridges: the testbed's plumbing without P4 (no LinkGuardian)."""

    name = "lxbr"
    runs_p4 = False


TARGETS: dict[str, Target] = {kind.name: kind() for kind in (Builtin, Bmv2, LinuxBridge)}
"Every target kind by its name; a new kind is a subclass of Target plus one entry here."

DEFAULT_TARGET = Builtin.name
"The target commands use unless told otherwise."

P4_TARGETS = tuple(name for name, kind in TARGETS.items() if kind.runs_p4)
"Names of the targets that run P4 programs."


def target_kind(name: str) -> Target:
    """The target kind called `name`; ValueError naming the known ones otherwise."""
    try:
        return TARGETS[name]
    except KeyError:
        raise ValueError(f"unknown target '{name}' (choose from {', '.join(TARGETS)})") from None


def preflight(name: str, *more_tools: str) -> str | None:
    """Why a Mininet testbed on target `name` cannot start here (not root, a tool of the
    testbed, of the caller or of the target missing), or None."""
    if os.geteuid() != 0:
        return "this needs root (Mininet creates namespaces and interfaces)"
    missing = check_tools(*TESTBED_TOOLS, *more_tools)
    if missing:
        return f"missing tools: {', '.join(missing)} (run `make setup`)"
    return target_kind(name).missing()
