"""PABO's data plane (p4/pabo.p4) in p4c's STF format: the bounce path, the loop bound, no
bounce toward hosts, header removal before a host, and PABO off (portable to BMv2)."""

from __future__ import annotations

import pytest
from testpaths import REPO

from lgkit.cli import main


@pytest.mark.parametrize("name", ["bounce", "off"])
def test_pabo_stf(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    program = REPO / "p4" / "pabo.p4"
    code = main(["stf", str(program), str(REPO / "tests" / "pabo_stf" / f"{name}.stf")])
    assert code == 0, capsys.readouterr()
