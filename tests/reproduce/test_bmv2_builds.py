"""scripts/bmv2_builds.py: each run finds the chosen build's simple_switch_grpc first on PATH,
its libraries first on LD_LIBRARY_PATH, and the installed runtime CLI still."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest
from testpaths import REPO

SPEC = importlib.util.spec_from_file_location("bmv2_builds", REPO / "scripts" / "bmv2_builds.py")
assert SPEC is not None and SPEC.loader is not None
bmv2_builds = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(bmv2_builds)


def _build(root: Path, name: str) -> Path:
    prefix = root / name
    (prefix / "bin").mkdir(parents=True)
    (prefix / "lib").mkdir()
    for tool in ("simple_switch_grpc", "simple_switch_CLI"):
        (prefix / "bin" / tool).write_text("#!/bin/sh\n")
        (prefix / "bin" / tool).chmod(0o755)
    return prefix


def test_a_run_uses_the_chosen_binary_only(tmp_path: Path, monkeypatch) -> None:
    installed = _build(tmp_path, "installed")
    fast = _build(tmp_path, "fast")
    monkeypatch.setenv("PATH", f"{installed / 'bin'}:/usr/bin")
    monkeypatch.setenv("LD_LIBRARY_PATH", str(installed / "lib"))
    links = tmp_path / "links"
    links.mkdir()
    env = bmv2_builds.build_env(fast, links)
    switch = shutil.which("simple_switch_grpc", path=env["PATH"])
    assert switch is not None and Path(switch).resolve() == fast / "bin" / "simple_switch_grpc"
    assert shutil.which("simple_switch_CLI", path=env["PATH"]) == str(
        installed / "bin" / "simple_switch_CLI")
    assert env["LD_LIBRARY_PATH"].split(":") == [str(fast / "lib"), str(installed / "lib")]


def test_a_prefix_without_the_switch_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="bmv2_builds: error: .*simple_switch_grpc does not "
                                         "exist"):
        bmv2_builds.build_env(tmp_path, tmp_path)
