"""Build a P4 program for a target with the compiler the target names."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from lgkit.core.targets import BuildError, target_kind


@dataclass(frozen=True)
class BuiltProgram:
    """P4Info and device config of a compiled program."""

    p4info: Path
    config: Path


def build_program(source: Path, target: str, out_dir: Path) -> BuiltProgram:
    """Compile `source` for `target` (a P4 target's name) into out_dir."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = source.stem
    p4info = out_dir / f"{stem}.p4info.txt"
    config = out_dir / f"{stem}.json"
    argv = target_kind(target).compile_argv(source, out_dir, p4info)
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode or not p4info.exists() or not config.exists():
        raise BuildError(f"compiling {source} for {target} failed:\n{done.stdout}{done.stderr}")
    return BuiltProgram(p4info, config)
