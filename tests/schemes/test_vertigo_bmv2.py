"""The Vertigo and PABO STF tests replayed on real BMv2 (p4c-bm2-ss + simple_switch), packet by
packet, with 8 priority queues as the experiments run them: both programs decide as on the
built-in target. Skipped where BMv2 is not installed."""

from __future__ import annotations

from pathlib import Path

import pytest
from testpaths import REPO
from tools.stf_bmv2 import replay

CASES = [("vertigo", "vertigo_stf", name) for name in ("deflect", "dibs", "ecmp")] + [
    ("pabo", "pabo_stf", name) for name in ("bounce", "off")]

pytestmark = pytest.mark.bmv2


@pytest.mark.parametrize(("program", "folder", "name"), CASES,
                         ids=[f"{p}-{n}" for p, _, n in CASES])
def test_stf_on_bmv2(tmp_path: Path, program: str, folder: str, name: str) -> None:
    stf = REPO / "tests" / folder / f"{name}.stf"
    assert replay(REPO / "p4" / f"{program}.p4", stf, tmp_path, priority_queues=8) == []
