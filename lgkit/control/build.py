"""Build a P4 program for a target: `lgkit compile` (built-in) or p4c (BMv2)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


class BuildError(RuntimeError):
    """The program did not compile (the message holds the compiler's output)."""


@dataclass(frozen=True)
class BuiltProgram:
    """P4Info and device config of a compiled program."""

    p4info: Path
    config: Path


def build_program(source: Path, target: str, out_dir: Path) -> BuiltProgram:
    """Compile `source` for `target` (builtin | bmv2) into out_dir."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = source.stem
    p4info = out_dir / f"{stem}.p4info.txt"
    config = out_dir / f"{stem}.json"
    if target == "bmv2":
        p4c = shutil.which("p4c") or shutil.which("p4c-bm2-ss")
        if p4c is None:
            raise BuildError("bmv2: p4c is not installed (not on PATH)")
        argv = [p4c, "--target", "bmv2", "--arch", "v1model", "--p4runtime-files", str(p4info),
                "-o", str(out_dir), str(source)]
    else:
        argv = [sys.executable, "-m", "lgkit.cli", "compile", str(source), "--out", str(out_dir)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode or not p4info.exists() or not config.exists():
        raise BuildError(f"compiling {source} for {target} failed:\n{done.stdout}{done.stderr}")
    return BuiltProgram(p4info, config)
