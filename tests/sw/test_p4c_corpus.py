"""p4c's own v1model STF tests (tests/p4c_corpus, Apache-2.0, see its README) on the built-in
target: every program passes except the few listed with the reason (docs/conformance.md).
`tests/tools/conformance.py --bmv2` runs them on BMv2 as well."""

from __future__ import annotations

from collections import Counter

import pytest
from tools import conformance

TESTS = conformance.programs(conformance.CORPUS)
NOT_PASSING = {
    # the stored versions of these tests are older than p4c 1.2.5.16, which rejects them too
    "arith-bmv2": "rejected", "arith-inline-bmv2": "rejected", "arith1-bmv2": "rejected",
    "arith2-bmv2": "rejected", "arith3-bmv2": "rejected", "arith4-bmv2": "rejected",
    "arith5-bmv2": "rejected",
    "gauntlet_index_3-bmv2": "stf-error",  # an odd number of hex digits (BMv2 fails it too)
    "gauntlet_optional-bmv2": "unsupported",  # not V1Switch (p4c-bm2-ss refuses it too)
}


def test_the_corpus_is_large_enough() -> None:
    assert len(TESTS) >= 60
    assert set(NOT_PASSING) <= {t.stem for t in TESTS}


@pytest.mark.parametrize("stf", TESTS, ids=[t.stem for t in TESTS])
def test_p4c_stf_test_on_the_builtin_target(stf) -> None:
    outcome = conformance.run_kit(stf)
    assert outcome.kind == NOT_PASSING.get(stf.stem, "pass"), outcome.reason


def test_summary_counts_and_ratios() -> None:
    verdicts = Counter({"pass": 61, "bmv2-only-fails": 3, "p4c-rejects": 7, "bad-test": 1,
                        "unsupported": 1})
    text = conformance.summary(verdicts, 73)
    assert "passes 64/73 programs (87.7%); 64/65 valid tests (98.5%); fail 0" in text
