"""Files written whole or not at all: a temporary file in the same folder, synced, renamed."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Any, TypeVar

FilePath = TypeVar("FilePath", bound=Path | str)


@contextmanager
def atomic_file(path: Path | str, binary: bool = False,
                newline: str | None = None) -> Iterator[IO[Any]]:
    """A file to fill that replaces `path` only when the block ends without an error: readers
    see the old file or the new one; after a kill, a full disk (ENOSPC) or a read-only file
    system (EROFS) nothing half-written is left (the OSError propagates)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with (tmp.open("wb") if binary else
              tmp.open("w", encoding="utf-8", newline=newline)) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        tmp.replace(path)
    finally:
        with suppress(OSError):
            tmp.unlink(missing_ok=True)


def write_atomic(path: Path | str, data: str | bytes) -> None:
    """Write a whole file (text as UTF-8) through atomic_file."""
    with atomic_file(path, binary=isinstance(data, bytes)) as handle:
        handle.write(data)


def write_all(files: Mapping[FilePath, str | bytes]) -> None:
    """Write several files, each atomically; on an OSError the ones already written are removed
    too (the outputs of one command stand together) and an OSError naming the file is raised."""
    written: list[Path] = []
    for path, data in files.items():
        try:
            write_atomic(path, data)
        except OSError as exc:
            for done in written:
                with suppress(OSError):
                    done.unlink()
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        written.append(Path(path))
