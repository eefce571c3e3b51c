"""The kit's P4Info is p4c's, for every program of the repository that p4c-bm2-ss accepts."""

from __future__ import annotations

import difflib
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from finsy.proto import p4i
from google.protobuf import text_format
from testpaths import REPO

from lgkit.sw.lang.frontend.compiler import compile_file
from lgkit.sw.lang.p4info import build_p4info

P4C = shutil.which("p4c-bm2-ss")
MAIN = re.compile(r"\)\s*main\s*;")

pytestmark = pytest.mark.bmv2("p4c-bm2-ss")


def programs() -> list[Path]:
    """Every P4 program (a file that instantiates main) in p4/, tests/ and exercises/, except
    the frontend's error cases (tests/**/errors/, which p4c rejects as well) and p4c's own
    tests (tests/p4c_corpus/: tests/tools/conformance.py runs them)."""
    found = [path for folder in ("p4", "tests", "exercises") for path in
             sorted((REPO / folder).rglob("*.p4"))
             if "errors" not in path.parts and "p4c_corpus" not in path.parts]
    return [path for path in found if MAIN.search(path.read_text())]


def p4c(program: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """p4c-bm2-ss with a P4Info in text format (.txtpb: no deprecation warning)."""
    return subprocess.run([P4C, "--p4runtime-files", str(out / "p4info.txtpb"), "-o",
                           str(out / "program.json"), str(program)],
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("program", programs(), ids=lambda p: str(p.relative_to(REPO)))
def test_p4info_is_p4cs(program: Path, tmp_path: Path) -> None:
    done = p4c(program, tmp_path)
    if done.returncode != 0:
        first = next((line for line in done.stderr.splitlines() if "rror" in line), "")
        pytest.skip(f"p4c rejects it: {first.replace(str(REPO) + '/', '').strip()}")
    theirs = text_format.Parse((tmp_path / "p4info.txtpb").read_text(), p4i.P4Info())
    ours = build_p4info(compile_file(str(program)).ir)
    if ours != theirs:
        diff = difflib.unified_diff(text_format.MessageToString(theirs).splitlines(),
                                    text_format.MessageToString(ours).splitlines(),
                                    "p4c", "lgkit", lineterm="")
        pytest.fail("P4Info differs from p4c's:\n" + "\n".join(list(diff)[:80]))


@pytest.mark.parametrize("name", ["linkguardian", "basic"])
def test_kit_programs_compile_without_warnings(name: str, tmp_path: Path) -> None:
    done = p4c(REPO / "p4" / f"{name}.p4", tmp_path)
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr.lower(), done.stderr
