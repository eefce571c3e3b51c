"""Shared pieces of the course tests: the tutorial environment, PATHs, free ports."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

from lgkit.course.toolchain import REPO, SHIMS, target_env

TUTORIALS = Path(__file__).resolve().parent / "tutorials"
__all__ = ["SHIMS", "TUTORIALS", "bmv2_env", "free_port", "kit_env", "make_tutorial_env"]


def make_tutorial_env() -> None:
    """`make tutorial-env` (idempotent); AssertionError with its output if it fails."""
    made = subprocess.run(["bash", str(REPO / "scripts" / "tutorial-env.sh")],
                          capture_output=True, text=True, timeout=600)
    assert made.returncode == 0, made.stdout + made.stderr
    assert (SHIMS / "simple_switch_grpc").exists(), "run `make setup` (it links the shims)"


def kit_env() -> dict[str, str]:
    """The tutorial Python, the kit's BMv2-named shims and the system: no real BMv2 or p4c."""
    return target_env("builtin")


def bmv2_env() -> dict[str, str] | None:
    """The tutorial Python and a real BMv2 + p4c, or None where they are not installed."""
    try:
        return target_env("bmv2")
    except ValueError:
        return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
