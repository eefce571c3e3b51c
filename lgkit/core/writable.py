"""Whether a folder takes files, checked before a command does any work."""

from __future__ import annotations

import tempfile
from pathlib import Path


def check_writable(folder: Path, target: Path | None = None) -> None:
    """Create `folder` and check that a file can be written in it (for `target`, by default
    the folder itself), before any work; ValueError saying why not."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        reason = "a file is in the way" if isinstance(
            error, FileExistsError | NotADirectoryError) else error.strerror
        raise ValueError(f"cannot write to {target or folder}: {reason}") from None
