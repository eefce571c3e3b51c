"""Which BMv2/p4c tools a command finds: the real ones, or the kit's shims (docs/course.md).

The shims live in .venv/bmv2-shims/bin, which the tutorial environment puts LAST on PATH, so a
real BMv2 or p4c on PATH wins. `lgkit toolchain` prints what each name resolves to.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from lgkit.core.targets import target_kind

REPO = Path(__file__).resolve().parents[2]
SHIMS = REPO / ".venv" / "bmv2-shims" / "bin"
TUTORIAL_VENV = REPO / ".venv-tutorial"
TOOLS = ("p4c", "p4c-bm2-ss", "simple_switch", "simple_switch_grpc", "simple_switch_CLI")
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
BMV2_DIRS = ("/opt/bmv2/wrap", "/opt/p4c/bin", "/opt/bmv2/bin")  # where the Vagrant VM puts them


def is_shim(path: str) -> bool:
    return Path(path).resolve().parent == (REPO / ".venv" / "bin").resolve() or \
        Path(path).parent.resolve() == SHIMS.resolve()


def resolve(tool: str, path: str) -> str | None:
    return shutil.which(tool, path=path)


def describe(tool: str, path: str) -> str:
    """'TOOL: WHERE (real BMv2/p4c | the kit's shim | not found)'."""
    found = resolve(tool, path)
    if found is None:
        return f"{tool}: not found"
    kind = "the kit's shim (built-in target)" if is_shim(found) else "real BMv2/p4c"
    return f"{tool}: {found} ({kind})"


def tutorial_path() -> str:
    """PATH as the tutorial environment sets it: its Python first, lgkit and the shims last."""
    return (f"{TUTORIAL_VENV / 'bin'}:{os.environ.get('PATH', SYSTEM_PATH)}:"
            f"{REPO / '.venv' / 'bin'}:{SHIMS}")


def target_env(target: str) -> dict[str, str]:
    """The environment an exercise runs in: a target that needs no outside tools (built-in)
    has only the kit's shims for the BMv2 tools; BMv2 has real BMv2 and p4c (PATH, else /opt).
    ValueError if not installed."""
    env = {"HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8"}
    if not target_kind(target).tools:
        env["PATH"] = f"{TUTORIAL_VENV / 'bin'}:{SHIMS}:{SYSTEM_PATH}"
        return env
    dirs = [d for d in os.environ.get("PATH", "").split(":")
            if d and Path(d).resolve() != SHIMS.resolve()]
    env["PATH"] = ":".join([str(TUTORIAL_VENV / "bin"), *dirs, *BMV2_DIRS, SYSTEM_PATH])
    for tool in ("p4c-bm2-ss", "simple_switch_grpc"):
        found = resolve(tool, env["PATH"])
        if found is None or is_shim(found):
            raise ValueError(f"bmv2: {tool} is not installed (not on PATH, not in /opt)")
    if Path("/opt/bmv2/lib").is_dir():
        env["LD_LIBRARY_PATH"] = "/opt/bmv2/lib"
    return env
