"""Vertigo's data plane (p4/vertigo.p4) in p4c's STF format: rank bands, push-out headroom,
deflection in the Vertigo, DIBS and ECMP modes (portable to BMv2)."""

from __future__ import annotations

import pytest
from testpaths import REPO

from lgkit.cli import main


@pytest.mark.parametrize("name", ["deflect", "dibs", "ecmp"])
def test_vertigo_stf(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    program = REPO / "p4" / "vertigo.p4"
    code = main(["stf", str(program), str(REPO / "tests" / "vertigo_stf" / f"{name}.stf")])
    assert code == 0, capsys.readouterr()
