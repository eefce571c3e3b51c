"""Shared pieces of the course tests: the tutorial environment, PATHs, BMv2 tools, free ports."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = Path(__file__).resolve().parent / "tutorials"
SHIMS = ROOT / ".venv" / "bmv2-shims" / "bin"
TUTORIAL_VENV = ROOT / ".venv-tutorial"
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
BMV2_DIRS = ("/opt/bmv2/wrap", "/opt/p4c/bin", "/opt/bmv2/bin")


def make_tutorial_env() -> None:
    """`make tutorial-env` (idempotent); AssertionError with its output if it fails."""
    made = subprocess.run(["bash", str(ROOT / "scripts" / "tutorial-env.sh")],
                          capture_output=True, text=True, timeout=600)
    assert made.returncode == 0, made.stdout + made.stderr
    assert (SHIMS / "simple_switch_grpc").exists(), "run `make setup` (it links the shims)"


def kit_env() -> dict[str, str]:
    """The tutorial Python, the kit's BMv2-named shims and the system: no real BMv2 or p4c."""
    path = f"{TUTORIAL_VENV / 'bin'}:{SHIMS}:{SYSTEM_PATH}"
    return {"PATH": path, "HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8"}


def bmv2_env() -> dict[str, str] | None:
    """The tutorial Python and a real BMv2 + p4c (PATH, else /opt/bmv2 and /opt/p4c), or None."""
    dirs = [d for d in os.environ.get("PATH", "").split(":") if d and Path(d) != SHIMS]
    path = ":".join([str(TUTORIAL_VENV / "bin"), *dirs, *BMV2_DIRS, SYSTEM_PATH])
    for tool in ("simple_switch_grpc", "p4c-bm2-ss"):
        found = shutil.which(tool, path=path)
        if found is None or Path(found).resolve().parent == SHIMS.resolve().parent:
            return None
    env = kit_env()
    env["PATH"] = path
    if Path("/opt/bmv2/lib").is_dir():
        env["LD_LIBRARY_PATH"] = "/opt/bmv2/lib"
    return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
