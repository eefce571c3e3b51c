"""A private redis-server on a free port of 127.0.0.1 that the harness starts and stops
(corruptd's bus)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time

from lgkit.core import naming
from lgkit.core.child import stop_process


class RedisUnavailable(RuntimeError):
    """redis-server is not installed or did not start."""


class RedisServer:
    """redis-server without persistence, bound to loopback, recorded for `lgkit clean`."""

    def __init__(self, port: int | None = None) -> None:
        self.port = port or _free_port()
        "A free port by default: no other run, system Redis or stray listener is ever reached."
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        """Connection URL for redis-py."""
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0) -> RedisServer:
        """Start the server and wait until it accepts connections."""
        binary = shutil.which("redis-server")
        if binary is None:
            raise RedisUnavailable("redis-server is not installed (apt-get install redis-server)")
        argv = [binary, "--bind", "127.0.0.1", "--port", str(self.port), "--save", "",
                "--appendonly", "no", "--dir", "/tmp", "--daemonize", "no"]
        self.process = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                                        start_new_session=True)
        naming.write_pid("redis", str(self.port), self.process.pid)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RedisUnavailable(f"redis-server exited at start: port {self.port} is "
                                       f"held by {_holder(self.port)}")
            if _answers_ping(self.port):
                return self
            time.sleep(0.05)
        self.stop()
        raise RedisUnavailable("redis-server did not accept connections in time")

    def stop(self) -> None:
        """Stop the server."""
        stop_process(self.process, 5.0, naming.pid_file("redis", str(self.port)))
        self.process = None

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on now (the kernel's choice)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _answers_ping(port: int) -> bool:
    """Whether a Redis server answers PING on the port (a silent listener does not)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(7).startswith(b"+PONG")
    except OSError:
        return False


def _holder(port: int) -> str:
    """Who listens on the port, as `ss` names it ('another process' if it cannot tell)."""
    try:
        done = subprocess.run(["ss", "-Hltnp", f"sport = :{port}"], capture_output=True,
                              text=True, check=False)
    except OSError:
        return "another process"
    users = done.stdout.partition("users:")[2].strip()
    return users or "another process"
