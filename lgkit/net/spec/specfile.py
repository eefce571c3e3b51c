"""Find and read a YAML spec by name in a kit folder (mininet/, workloads/) or by path."""

from __future__ import annotations

from pathlib import Path

import yaml

KIT_ROOT = Path(__file__).resolve().parents[3]


def read_spec(
    name_or_path: str, folder: Path, what: str, error: type[Exception]
) -> tuple[Path, dict]:
    """(path, parsed YAML) of folder/NAME.yaml or of a path; `error` names the known specs."""
    path = Path(name_or_path)
    if not path.suffix:
        path = folder / f"{name_or_path}.yaml"
    if not path.exists():
        known = ", ".join(sorted(p.stem for p in folder.glob("*.yaml")))
        raise error(f"no {what} '{name_or_path}' (known: {known})")
    return path, yaml.safe_load(path.read_text())
