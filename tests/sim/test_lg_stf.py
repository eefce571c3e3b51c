"""LinkGuardian's sender and receiver roles in p4c's STF format (portable to BMv2)."""

from __future__ import annotations

import pytest
from testpaths import REPO

from lgkit.cli import main


@pytest.mark.slow
@pytest.mark.parametrize("name", ["sender", "receiver", "receiver_window", "two_ports",
                                  "pause_timeout", "hold_lost_ticket"])
def test_lg_stf(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    program = REPO / "p4" / "linkguardian.p4"
    code = main(["stf", str(program), str(REPO / "tests" / "lg_stf" / f"{name}.stf")])
    assert code == 0, capsys.readouterr()
