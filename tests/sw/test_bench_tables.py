"""`lgkit bench-tables`: bad sizes are one-line errors; a tiny run prints every figure for the
built-in switch (and BMv2 beside it when installed, else one line saying so)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from test_net_support import network_lock

from lgkit.sw.tools.bench_tables import Bmv2Target


def _bench(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lgkit.cli", "bench-tables", *args],
                          capture_output=True, text=True, timeout=timeout, check=False)


@pytest.mark.parametrize("args", [["--batch", "0"], ["--batch", "100000"], ["--entries", "0"],
                                  ["--entries", "100", "--block", "200"],
                                  ["--entries", "100", "--block", "50", "--installed", "70"],
                                  ["--write-seconds", "nan"], ["--stf-adds", "-1"]])
def test_bad_sizes_are_one_line_errors(args: list[str]) -> None:
    done = _bench(*args, timeout=60)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("lgkit: error: --") and done.stderr.count("\n") == 1, done.stderr


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (network namespaces)")
def test_tiny_run_prints_every_figure() -> None:
    with network_lock():
        done = _bench("--entries", "400", "--block", "200", "--installed", "200",
                      "--write-seconds", "0.1", "--stf-adds", "20")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    names = ["built-in"]
    if Bmv2Target.missing():
        assert "BMv2: not installed" in out
        print("BMv2 not installed: the built-in switch alone")
    else:
        names.append("BMv2")
    for name in names:
        section = out[out.index(f"\n{name}: 400 inserts"):]
        assert re.search(r"per 200-entry block [\d.]+, [\d.]+ s", section)
        for label in ("no writes", "one write per 10 ms", "Read of 201 entries"):
            line = next(x for x in section.splitlines() if label in x)
            assert re.search(r"over [1-9]\d* packets, 0 lost", line), line
    assert "garbage collections since the program load" in out  # the built-in's summary
    for order in ("interleaved", "adds first"):
        assert f"STF, 20 adds {order} (built-in)" in out
