"""The kit's own STF corpus (tests/stf/NAME.p4 + NAME.stf), each run through `lgkit stf`."""

from __future__ import annotations

from pathlib import Path

import pytest
from testpaths import TESTS

from lgkit.cli import main

CORPUS = TESTS / "stf"
TESTS = sorted(p for p in CORPUS.glob("*.stf") if p.with_suffix(".p4").is_file())


def test_corpus_is_not_empty() -> None:
    assert len(TESTS) >= 10


@pytest.mark.parametrize("stf", TESTS, ids=[p.stem for p in TESTS])
def test_stf_corpus(stf: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["stf", str(stf.with_suffix(".p4")), str(stf)])
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
    assert f"PASS {stf}" in out.out
