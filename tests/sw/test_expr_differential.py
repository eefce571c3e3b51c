"""Random expression programs (tests/tools/p4exprgen.py): the built-in target computes what the
P4 spec's rules give, and what BMv2 computes where p4c and simple_switch are installed. Longer
runs: `python tests/tools/exprdiff.py --count 1000` (docs/conformance.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tools.exprdiff import check_seed

SPEC_SEEDS = range(1, 31)
BMV2_SEEDS = range(100, 104)


@pytest.mark.parametrize("seed", SPEC_SEEDS)
def test_kit_computes_what_the_spec_says(seed: int, tmp_path: Path) -> None:
    outcome = check_seed(seed, tmp_path, use_bmv2=False)
    assert outcome.kind == "ok", outcome.report


def test_generator_covers_every_operator() -> None:
    from tools import p4exprgen

    text = "".join(p4exprgen.random_program(seed).source() for seed in SPEC_SEEDS)
    for op in [" + ", " - ", " * ", " & ", " | ", " ^ ", " << ", " >> ", " |+| ", " |-| ",
               " ++ ", "(~", "(-", " ? ", " && ", " || ", "(!", "((int<", "((bit<", "fn0(",
               "].v = "]:
        assert op in text, op
    assert re.search(r"\]\[\d+:\d+\] = |\w\[\d+:\d+\] = ", text)  # a slice as a target
    assert re.search(r"\)\[\d+:\d+\]", text)  # a slice of an expression


@pytest.mark.bmv2
@pytest.mark.parametrize("seed", BMV2_SEEDS)
def test_kit_and_bmv2_agree(seed: int, tmp_path: Path) -> None:
    outcome = check_seed(seed, tmp_path, use_bmv2=True)
    assert outcome.kind == "ok", outcome.report
