"""A private redis-server on 127.0.0.1 that the harness starts and stops (corruptd's bus)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time

from lgkit.core import naming
from lgkit.core.child import stop_process

DEFAULT_PORT = 6390
"Not Redis's default 6379, so a system Redis is never touched."


class RedisUnavailable(RuntimeError):
    """redis-server is not installed or did not start."""


class RedisServer:
    """redis-server without persistence, bound to loopback, recorded for `lgkit clean`."""

    def __init__(self, port: int = DEFAULT_PORT) -> None:
        self.port = port
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
                raise RedisUnavailable(f"redis-server exited at start (port {self.port} in use?)")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return self
            except OSError:
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
