"""Find and read a YAML spec by name in a kit folder (mininet/, workloads/) or by path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

KIT_ROOT = Path(__file__).resolve().parents[2]


def read_spec(
    name_or_path: str, folder: Path, what: str, error: type[Exception]
) -> tuple[Path, dict[str, Any]]:
    """(path, parsed YAML mapping) of folder/NAME.yaml or of a path. Errors are `error` with a
    one-line message: an unknown name (listing the known specs), invalid YAML (with its line and
    column; tags that would build Python objects are refused, never executed), or YAML that is
    not a mapping."""
    path = Path(name_or_path)
    if not path.suffix:
        path = folder / f"{name_or_path}.yaml"
    if not path.exists():
        known = ", ".join(sorted(p.stem for p in folder.glob("*.yaml")))
        raise error(f"no {what} '{name_or_path}' (known: {known})")
    if not path.is_file():
        raise error(f"{path}: not a regular file")
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:  # also a tag like !!python/object: safe_load never builds one
        where = getattr(exc, "problem_mark", None)
        at = f":{where.line + 1}:{where.column + 1}" if where is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise error(f"{path}{at}: not a valid {what} YAML: {problem}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{path}: cannot read: {exc}") from None
    if not isinstance(raw, dict):
        got = "an empty file" if raw is None else f"a YAML {type(raw).__name__}"
        raise error(f"{path}: a {what} must be a mapping of settings, got {got}")
    return path, raw
