"""The `lgkit switch` (like simple_switch_grpc) and `switch-cli` commands."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
import time
from typing import Any

from lgkit.sw.exec.native.select import ENGINE_HELP, ENGINES
from lgkit.sw.exec.pipeline import select_engine, turn_optimisers_off

from .collector import Collector
from .control_service import CommandError, ControlClient, SwitchCommands, control_handler
from .linkrate import parse_port_rates, shaped_rate_bps
from .ports import PortLoop
from .switch import Switch

LOG_LEVELS = {"trace": logging.DEBUG, "debug": logging.DEBUG, "info": logging.INFO,
              "warn": logging.WARNING, "error": logging.ERROR, "off": logging.CRITICAL + 1}
# simple_switch(_grpc) options that mean nothing here: accepted with a warning.
IGNORED_WITH_VALUE = ["--dump-packet-data", "--max-mc-groups",
                      "--notifications-addr", "--restore-state", "--debugger-addr",
                      "--max-port-count", "--use-files", "--nanolog", "--packet-in",
                      "--log-file-max-size", "--log-file-max-files", "--load-modules",
                      "--dp-grpc-server-addr"]
IGNORED_FLAGS = ["--enable-swap", "--disable-swap", "--log-flush", "--debugger"]
UNSUPPORTED = ["--grpc-server-ssl", "--grpc-server-cacert", "--grpc-server-cert",
               "--grpc-server-key", "--grpc-server-with-client-auth"]


IFNAMSIZ = 16  # Linux: interface names are at most 15 bytes
STOP_GRACE_S = 2.0
"How long SIGTERM/SIGINT waits for the packet loop (and a pass in progress) to stop."
GIL_SWITCH_INTERVAL_S = 0.0005
"""How long a busy thread keeps the GIL while another waits for it (Python's default: 5 ms).
The packet loop shares the process with the P4Runtime threads; when a Read encodes 100k
entries, the loop waits up to this long each time it takes the GIL back (several times per
packet), so the default let one Read add 11 ms to a packet's delay (`lgkit bench-tables`).
It costs no forwarding: `lgkit bench-switch --repeat 1 --seconds 3`, 5 ms and 0.5 ms
alternating, 3 rounds each (2026-11-29, load average 8-12 on 2 cores), min / median / max:
TCP 131 / 266 / 429 vs 275 / 378 / 517 Mb/s, UDP 1400 B 9.1k / 30.5k / 31.5k vs 16.0k / 26.0k /
29.6k pps, UDP 64 B 16.3k / 21.6k / 34.5k vs 28.6k / 30.0k / 43.1k pps (noise dominates).
0.1 ms halves the median delay during a 100k Read (0.64, 0.58 -> 0.26, 0.23 ms) but not its
max (3.3, 3.8 -> 5.1, 5.3 ms; `bench-tables --no-bmv2 --entries 100000`, 2 rounds each)."""


class UsageError(Exception):
    """Bad command-line usage (exit status 2)."""


def check_address(text: str, option: str = "--grpc-server-addr") -> str:
    """`text` if it is HOST:PORT (IPv6 in brackets) with PORT in 0..65535, else UsageError."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or host in ("[", "[]") or not port.isdigit() or int(port) > 65535:
        raise UsageError(f"{option} {text}: expected HOST:PORT with PORT in 0..65535")
    return text


class _OptionParser(argparse.ArgumentParser):
    """Parses the words after the program and `--`: errors are one UsageError line."""

    def error(self, message: str) -> Any:
        raise UsageError(message)


def _add_switch_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-i", "--interface", action="append", default=None,
                        metavar="PORT@IFACE", help="attach interface IFACE as port PORT")
    parser.add_argument("--device-id", type=int, default=None, help="P4Runtime device id (0)")
    parser.add_argument("--grpc-server-addr", default=None,
                        help="P4Runtime + control address (127.0.0.1:9559)")
    parser.add_argument("--cpu-port", type=int, default=None,
                        help="port for P4Runtime packet-in/out (none)")
    parser.add_argument("--priority-queues", type=int, default=None,
                        help="egress queues per port, selected by standard_metadata.priority (1)")
    parser.add_argument("--drop-port", type=int, default=None, help="the drop port (511)")
    parser.add_argument("--max-parser-transitions", type=int, default=None, metavar="N",
                        help="parser states one packet may visit before error.ParserTimeout "
                             "(10000)")
    parser.add_argument("--max-loop-iterations", type=int, default=None, metavar="N",
                        help="loop iterations one pass may run before it ends and its packet "
                             "is dropped (100000)")
    parser.add_argument("--log-console", action="store_true", default=None,
                        help="log to the console")
    parser.add_argument("--log-file", default=None, help="log to this file")
    parser.add_argument("-L", "--log-level", choices=sorted(LOG_LEVELS), default=None,
                        help="log level (info)")
    parser.add_argument("--pcap", nargs="?", const=".", default=None, metavar="DIR",
                        help="write DIR/<iface>_in.pcap and _out.pcap")
    parser.add_argument("--no-opt", action="store_true", default=None,
                        help="run programs without the optimisers (as LGKIT_NO_OPT=1 does)")
    parser.add_argument("--engine", choices=ENGINES, default=None, help=ENGINE_HELP)
    parser.add_argument("--no-p4", action="store_true", default=None,
                        help="start without a program (push one over P4Runtime)")
    parser.add_argument("--thrift-port", type=int, default=None, metavar="PORT",
                        help="serve BMv2's Thrift runtime (simple_switch_CLI) on localhost:PORT")
    parser.add_argument("--port-rate", action="append", default=None, metavar="[PORT:]RATE",
                        help="egress rate of every port (or of PORT), e.g. 10M; without it a "
                             "port follows its link's tc shaping (a Mininet link's bw)")
    for option in IGNORED_WITH_VALUE:
        parser.add_argument(option, dest=_dest(option), default=None, help=argparse.SUPPRESS)
    for option in IGNORED_FLAGS:
        parser.add_argument(option, dest=_dest(option), action="store_const", const=True,
                            default=None, help=argparse.SUPPRESS)
    for option in UNSUPPORTED:
        parser.add_argument(option, dest=_dest(option), nargs="?", const=True, default=None,
                            help=argparse.SUPPRESS)


def _dest(option: str) -> str:
    return "opt_" + option.lstrip("-").replace("-", "_")


DEFAULTS: dict[str, Any] = {
    "interface": [], "device_id": 0, "grpc_server_addr": "127.0.0.1:9559", "cpu_port": None,
    "priority_queues": 1, "drop_port": 511, "log_console": False, "log_level": "info",
    "no_p4": False, "no_opt": False,
}


def register(subparsers: Any) -> None:
    sw = subparsers.add_parser(
        "switch", help="run the built-in P4 switch on real interfaces (like simple_switch_grpc)",
        description="Run the built-in v1model switch on AF_PACKET ports with a P4Runtime server "
                    "(and the switch-cli control service) on --grpc-server-addr. Options of "
                    "simple_switch_grpc may also follow a `--` separator.")
    _add_switch_options(sw)
    sw.add_argument("args", nargs=argparse.REMAINDER, metavar="PROGRAM [-- TARGET-OPTIONS]",
                    help="a .p4 program (compiled now) or a device config (.json); options "
                         "may also follow it")
    sw.set_defaults(func=run_switch)

    cli = subparsers.add_parser(
        "switch-cli", help="run-time control of a running switch (BMv2 runtime_CLI commands)",
        description="Send runtime_CLI commands (set_queue_depth, set_queue_rate, set_port_rate, "
                    "mirroring_add, mc_*, table_add, ...) to a running `lgkit switch`; "
                    "commands come from -c or from stdin, one per line.")
    cli.add_argument("--grpc-server-addr", default="127.0.0.1:9559")
    cli.add_argument("-c", "--command", action="append", default=[],
                     help="a command to run (repeatable); without -c, read stdin")
    cli.set_defaults(func=run_switch_cli)


def resolve_options(args: argparse.Namespace,
                    defaults: dict[str, Any] | None = None) -> argparse.Namespace:
    """Fold PROGRAM and the options after `--` into `args`, apply defaults, check values."""
    extra = _OptionParser(prog="lgkit switch", add_help=False)
    _add_switch_options(extra)
    extra.add_argument("program", nargs="?", default=None)
    words = list(args.args)
    if words and words[0] == "--":
        words.pop(0)
    args.program = None
    split = words.index("--") if "--" in words else len(words)
    rest = extra.parse_args(words[:split])
    target = extra.parse_args(words[split + 1:])
    if target.program is not None:
        raise UsageError(f"unexpected {target.program} among the target options after `--`")
    _merge(args, vars(rest))
    _merge(args, vars(target))
    for key, value in {**DEFAULTS, **(defaults or {})}.items():
        if getattr(args, key, None) is None:
            setattr(args, key, value)
    _check_options(args)
    return args


def _merge(args: argparse.Namespace, parsed: dict[str, Any]) -> None:
    for key, value in parsed.items():
        if key == "program":
            if value is not None:
                if args.program is not None:
                    raise UsageError(f"two programs given: {args.program} and {value}")
                args.program = value
        elif key == "interface" and value:
            args.interface = (args.interface or []) + value
        elif value is not None and getattr(args, key, None) is None:
            setattr(args, key, value)


def _check_options(args: argparse.Namespace) -> None:
    for option in UNSUPPORTED:
        if getattr(args, _dest(option)) is not None:
            raise UsageError(f"{option}: TLS is not supported by lgkit switch")
    if args.program is None and not args.no_p4:
        raise UsageError("give a PROGRAM (.p4 or device config .json) or --no-p4")
    if args.program is not None and args.no_p4:
        raise UsageError("--no-p4 and a PROGRAM exclude each other")
    check_address(args.grpc_server_addr)
    if args.thrift_port is not None and not 1 <= args.thrift_port <= 65535:
        raise UsageError(f"--thrift-port {args.thrift_port}: expected a port in 1..65535")
    if not 0 <= args.device_id < 2**64:
        raise UsageError(f"--device-id {args.device_id}: expected 0..2^64-1 (P4Runtime's uint64)")
    if not 1 <= args.priority_queues <= 8:
        raise UsageError("--priority-queues must be in 1..8")
    if not 0 <= args.drop_port < 512:
        raise UsageError("--drop-port must fit bit<9>")
    if args.max_parser_transitions is not None and args.max_parser_transitions < 1:
        raise UsageError("--max-parser-transitions must be at least 1")
    if args.max_loop_iterations is not None and args.max_loop_iterations < 1:
        raise UsageError("--max-loop-iterations must be at least 1")
    ports = []
    for spec in args.interface:
        port, sep, ifname = spec.partition("@")
        if not sep or not port.isdigit() or not ifname:
            raise UsageError(f"-i {spec}: expected PORT@IFACE")
        if not _valid_ifname(ifname):
            raise UsageError(f"-i {spec}: {ifname!r} is not a Linux interface name (1 to "
                             f"{IFNAMSIZ - 1} characters, no '/', ':' or white space)")
        if not 0 <= int(port) < 512 or int(port) == args.drop_port:
            raise UsageError(f"-i {spec}: port must be in 0..511 and not the drop port")
        ports.append((int(port), ifname))
    if len({p for p, _ in ports}) != len(ports) or len({i for _, i in ports}) != len(ports):
        raise UsageError("each port number and each interface may appear once")
    if args.cpu_port is not None:
        if not 0 < args.cpu_port < 512:
            raise UsageError("--cpu-port must be in 1..511")
        if args.cpu_port in {p for p, _ in ports} or args.cpu_port == args.drop_port:
            raise UsageError("--cpu-port must not be an -i port or the drop port")
    args.ports = ports
    try:
        parse_port_rates(args.port_rate or [])
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _valid_ifname(name: str) -> bool:
    """Whether Linux accepts `name` for a network interface (its dev_valid_name rule)."""
    return (0 < len(name.encode()) < IFNAMSIZ and name not in (".", "..")
            and not any(c in "/:" or c.isspace() for c in name))


def _warn_ignored(args: argparse.Namespace) -> None:
    for option in IGNORED_WITH_VALUE + IGNORED_FLAGS:
        if getattr(args, _dest(option)) is not None:
            print(f"lgkit switch: warning: {option} has no effect on the built-in target",
                  file=sys.stderr)


def _setup_logging(args: argparse.Namespace) -> logging.Logger:
    """The switch's logger; OSError if the log file cannot be opened."""
    log = logging.getLogger("lgkit.switch")
    log.setLevel(LOG_LEVELS[args.log_level])
    log.propagate = False
    log.handlers.clear()
    handler: logging.Handler
    if args.log_file:
        handler = logging.FileHandler(args.log_file)
    elif args.log_console:
        handler = logging.StreamHandler(sys.stderr)
    else:  # errors are always shown
        handler = logging.StreamHandler(sys.stderr)
        handler.setLevel(logging.ERROR)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    log.addHandler(handler)
    return log


def run_switch(args: argparse.Namespace, defaults: dict[str, Any] | None = None) -> int:
    from .loader import load_program  # the frontend loads only when a switch runs

    try:
        args = resolve_options(args, defaults)
    except UsageError as exc:
        return _error(str(exc), status=2)
    _warn_ignored(args)
    if args.no_opt:
        turn_optimisers_off()  # also for programs pushed over P4Runtime
    if args.engine:
        select_engine(args.engine)  # likewise
    try:
        log = _setup_logging(args)
    except OSError as exc:
        return _error(f"--log-file {args.log_file}: {exc.strerror}")
    switch = Switch(device_id=args.device_id, cpu_port=args.cpu_port,
                    priority_queues=args.priority_queues, drop_port=args.drop_port, log=log,
                    max_parser_transitions=args.max_parser_transitions,
                    max_loop_iterations=args.max_loop_iterations)
    collector = Collector()
    switch.on_pipeline_change.append(collector.on_pipeline_change)
    switch.on_entries_added.append(collector.on_entries_added)
    if args.program is not None:
        try:
            switch.set_pipeline(load_program(args.program))
        except ValueError as exc:
            return _error(str(exc))
    return _serve(switch, args, log, collector)


def _error(message: str, status: int = 1) -> int:
    print(f"lgkit: error: {message}", file=sys.stderr)
    return status


def _serve(switch: Switch, args: argparse.Namespace, log: logging.Logger,
           collector: Collector) -> int:
    from lgkit.sw.p4runtime.server import P4RuntimeServer

    if args.pcap is not None:
        try:
            os.makedirs(args.pcap, exist_ok=True)
        except OSError as exc:
            return _error(f"--pcap {args.pcap}: {exc.strerror}")
    loop = PortLoop(switch, pcap_dir=args.pcap, log=log)
    server = None
    try:
        for port, ifname in args.ports:
            loop.add_interface(port, ifname)
        _set_port_rates(switch, args, log)
        commands = SwitchCommands(switch)
        server = P4RuntimeServer(switch, args.grpc_server_addr,
                                 extra_handlers=(control_handler(commands),))
        server.start()
        thrift = _start_thrift(args, server, commands)
    except (OSError, ValueError) as exc:
        if server is not None:
            server.stop()
        loop.close()
        return _error(str(exc))
    collector.start()
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
    stop = _StopRequest()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, stop.request)
    worker = threading.Thread(target=loop.run, name="switch-loop", daemon=True)
    worker.start()
    ports = ", ".join(f"{p}@{i}" for p, i in args.ports) or "none"
    address = f"{args.grpc_server_addr.rpartition(':')[0]}:{server.port}"
    print(f"lgkit switch: ready; ports {ports}; gRPC on {address}", flush=True)
    log.info("switch started: ports %s", ports)
    while not stop.requested and worker.is_alive():
        time.sleep(0.1)  # the main thread only waits for signals
    loop.stop()
    worker.join(STOP_GRACE_S)
    if thrift is not None:
        thrift.stop()
    server.stop()
    print(f"lgkit switch: stopped; native port loop runs {loop.native_sessions}; "
          f"{collector.summary()}", flush=True)
    if worker.is_alive():
        log.error("a pipeline pass did not end within %.0f s of the stop request; exiting "
                  "without closing the ports", STOP_GRACE_S)
        sys.stderr.flush()
        os._exit(1)
    loop.close()
    return 0 if stop.requested else _error("the packet loop ended unexpectedly (see the log)")


class _StopRequest:
    """Set by SIGTERM or SIGINT (only a flag: the main thread acts on it)."""

    def __init__(self) -> None:
        self.requested = False

    def request(self, signum: int, frame: object) -> None:
        self.requested = True


def _start_thrift(args: argparse.Namespace, server: Any, commands: SwitchCommands) -> Any:
    """BMv2's Thrift runtime on --thrift-port (None without it); OSError if the port is busy."""
    if args.thrift_port is None:
        return None
    from .loader import bmv2_json_text, device_config_bytes
    from .thrift_service import RuntimeServices, ThriftServer

    def config_json() -> str:
        state = server.service.state
        if state is not None:
            return bmv2_json_text(state.config.p4_device_config)
        return bmv2_json_text(device_config_bytes(args.program)) if args.program else "{}"

    thrift = ThriftServer(RuntimeServices(commands.run, config_json), args.thrift_port)
    thrift.start()
    return thrift


def _set_port_rates(switch: Switch, args: argparse.Namespace, log: logging.Logger) -> None:
    """Each port's egress rate: --port-rate, else the rate its link is shaped to, if any."""
    every, per_port = parse_port_rates(args.port_rate or [])
    for port, ifname in args.ports:
        rate = per_port.get(port, every)
        source = "--port-rate"
        if rate is None:
            rate, source = shaped_rate_bps(ifname), f"the tc shaping of {ifname}"
        if rate:
            switch.tm.set_port_rate(rate, port)
            log.info("port %d: egress rate %.0f bit/s (%s)", port, rate, source)


def run_switch_cli(args: argparse.Namespace) -> int:
    try:
        check_address(args.grpc_server_addr)
    except UsageError as exc:
        return _error(str(exc), status=2)
    lines = args.command or sys.stdin.read().splitlines()
    client = ControlClient(args.grpc_server_addr)
    status = 0
    try:
        for line in lines:
            if not line.strip() or line.strip().startswith("#"):
                continue
            try:
                output = client.run(line)
            except CommandError as exc:
                print(f"error: {line.strip()}: {exc}", file=sys.stderr)
                status = 1
                continue
            except ConnectionError as exc:
                return _error(str(exc))
            if output:
                print(output)
    finally:
        client.close()
    return status


def _run_as(prog: str, argv: list[str], defaults: dict[str, Any]) -> int:
    """`lgkit switch` under a BMv2 program name, with that program's own defaults."""
    parser = argparse.ArgumentParser(prog=prog)
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["switch", *argv])
    print(f"{prog}: the lgkit built-in target (BMv2 command line; docs/course.md)",
          file=sys.stderr)
    return run_switch(args, defaults)


def simple_switch_grpc_main() -> int:
    """Console script `lgkit-simple-switch-grpc` (`simple_switch_grpc` in the shims dir)."""
    return _run_as("simple_switch_grpc", sys.argv[1:], {})


def simple_switch_main() -> int:
    """Console script `lgkit-simple-switch` (`simple_switch`): no fixed gRPC port to clash on."""
    return _run_as("simple_switch", sys.argv[1:], {"grpc_server_addr": "127.0.0.1:0"})
