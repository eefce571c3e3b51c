"""The C host agent (vertigo_agent/agent.c): built with the system C compiler against
libnetfilter_queue into a cache on first use, one binary per source text."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from lgkit.sw.atomic_file import atomic_file

SOURCE = Path(__file__).with_name("vertigo_agent") / "agent.c"
LIBS = ("-lnetfilter_queue",)


def cache_dir() -> Path:
    """Where built agents are kept ($XDG_CACHE_HOME/lgkit, else ~/.cache/lgkit)."""
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "lgkit"


def target() -> Path:
    """The binary for the current source."""
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:16]
    return cache_dir() / f"vertigo-agent-{digest}"


def build() -> tuple[Path | None, str]:
    """The built agent, building it if needed; (None, why) when it cannot be built."""
    path = target()
    if path.exists():
        return path, ""
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return None, "no C compiler (cc)"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "agent"
        done = subprocess.run([compiler, "-O2", "-Wall", "-o", str(out), str(SOURCE), *LIBS],
                              capture_output=True, text=True)
        if done.returncode != 0:
            first = (done.stderr.strip().splitlines() or ["failed"])[0]
            return None, f"{Path(compiler).name}: {first}"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with atomic_file(path, binary=True) as handle:
                handle.write(out.read_bytes())
                os.fchmod(handle.fileno(), 0o755)
        except OSError as exc:
            return None, f"cannot write {path}: {exc.strerror}"
    return path, ""
