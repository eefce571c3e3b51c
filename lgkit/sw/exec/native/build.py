"""Compile C with the system C compiler into a cache keyed by the source's hash (the native
engine's generated code, Vertigo's host agent)."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path

from lgkit.sw.atomic_file import write_atomic
from lgkit.sw.exec.native.layout import Unsupported

CACHE_ENV = "LGKIT_NATIVE_CACHE"
FLAGS = {True: ["-O2"], False: ["-O0"]}  # optimised or not (--no-opt)
COMMON = ["-shared", "-fPIC", "-std=gnu11", "-w"]
TIMEOUT_S = 120


def cache_dir() -> Path:
    """$LGKIT_NATIVE_CACHE, else $XDG_CACHE_HOME/lgkit/native (~/.cache/lgkit/native)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "lgkit" / "native"


def compiler() -> str | None:
    """The C compiler: $CC, else cc; None when there is none."""
    return shutil.which(os.environ.get("CC", "cc"))


def shared_library(source: str, optimise: bool) -> Path:
    """The compiled library of `source` (see compiled)."""
    return compiled(source, FLAGS[optimise] + COMMON, ".so")


def compiled(source: str, flags: list[str], suffix: str, libs: Sequence[str] = ()) -> Path:
    """`source` compiled with `flags` and linked with `libs` (a library or, without -shared, a
    program), built once per source, flags and libraries and written atomically: a file in the
    cache is whole. Unsupported when no C compiler is found or it fails."""
    cc = compiler()
    if cc is None:
        raise Unsupported("no C compiler (cc)")
    args = [*flags, *libs]
    digest = hashlib.sha256((" ".join(args) + "\n" + source).encode()).hexdigest()[:32]
    folder = cache_dir()
    out = folder / f"{digest}{suffix}"
    if out.is_file():
        return out
    try:
        _build_once([cc, *flags], list(libs), source, folder, out)
    except OSError as exc:
        raise Unsupported(f"build cache {folder} ({exc.strerror or exc})") from None
    except subprocess.TimeoutExpired:
        raise Unsupported(f"C compiler taking more than {TIMEOUT_S} s") from None
    return out


def _build_once(command: list[str], libs: list[str], source: str, folder: Path, out: Path
                ) -> None:
    """Build `out` unless another process did meanwhile: processes loading one program at
    once (a network's switches on a cold cache) build it once, the others waiting on its lock
    file (removed when the build is over) and then taking the library."""
    folder.mkdir(parents=True, exist_ok=True)
    lock_path = out.with_name(f".{out.stem}.lock")
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when closed (or the process ends)
        try:
            if not out.is_file():
                _build(command, libs, source, folder, out)
        finally:  # a waiter on it then finds the library; a newcomer, before locking
            lock_path.unlink(missing_ok=True)


def _build(command: list[str], libs: list[str], source: str, folder: Path, out: Path) -> None:
    """Compile into a temporary name in the cache, then rename it into place."""
    src = out.with_suffix(".c")
    write_atomic(src, source)
    tmp = folder / f".{out.name}.{os.getpid()}.tmp"
    try:
        done = subprocess.run([*command, "-o", str(tmp), str(src), *libs], capture_output=True,
                              text=True, timeout=TIMEOUT_S, check=False)
        if done.returncode != 0:
            first = (done.stderr.strip().splitlines() or ["?"])[0]
            raise Unsupported(f"C compiler failure ({first})")
        tmp.replace(out)
    finally:
        with suppress(OSError):
            tmp.unlink(missing_ok=True)
