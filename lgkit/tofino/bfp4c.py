"""Run bf-p4c on a TNA program and read the resources it used from its reports."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path

# Tofino 1: 12 MAU stages, each with 80 SRAM blocks, 24 TCAM blocks and 4 stateful (meter) ALUs;
# the normal PHV holds 64 x 8 + 96 x 16 + 64 x 32 = 4096 bits.
STAGES = 12
CHIP = {"SRAM": STAGES * 80, "TCAM": STAGES * 24, "Meter ALU": STAGES * 4}
PHV_BITS = 4096


class CompileError(Exception):
    """bf-p4c rejected the program (the message holds its first error lines)."""


@dataclass(frozen=True)
class Resources:
    """What one compiled program uses: counts and the share of the chip (percent)."""

    stages: int
    sram: int
    sram_pct: float
    tcam: int
    tcam_pct: float
    salu: int
    salu_pct: float
    phv_bits: int
    phv_pct: float

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def find() -> str | None:
    """The bf-p4c driver on PATH, or None."""
    return shutil.which("bf-p4c")


def compile_tna(program: Path, out: Path, bf_p4c: str) -> Resources:
    """Compile `program` for Tofino (TNA) into `out` and read its resource reports."""
    cmd = [bf_p4c, "--std", "p4-16", "--target", "tofino", "--arch", "tna", "-g",
           "-o", str(out), str(program)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=program.parent, check=False)
    if proc.returncode != 0:
        errors = [line for line in (proc.stdout + proc.stderr).splitlines() if "error" in line]
        raise CompileError("; ".join(errors[:3]) or f"bf-p4c exited {proc.returncode}")
    return read_reports(out / "pipe" / "logs")


def _table_rows(text: str) -> dict[str, list[str]]:
    """The first table of mau.resources.log (absolute counts): row label -> cells."""
    rows: dict[str, list[str]] = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 5:
            continue
        label = cells[0]
        if label == "Stage Number" and "header" in rows:
            break  # the second table (percentages) starts
        if label == "Stage Number":
            rows["header"] = cells
        elif label:
            rows.setdefault(label, cells)
    return rows


def read_reports(logs: Path) -> Resources:
    """Resources from bf-p4c's mau.resources.log (MAU) and metrics.json (PHV)."""
    text = (logs / "mau.resources.log").read_text(encoding="utf-8")
    rows = _table_rows(text)
    header = rows["header"]
    col = {name: i for i, name in enumerate(header)}
    stages_used = [label for label, cells in rows.items()
                   if label.isdigit() and any(c not in ("", "0") for c in cells[1:])]
    totals = rows["Totals"]
    metrics = json.loads((logs / "metrics.json").read_text(encoding="utf-8"))
    phv_bits = sum(c["bits_occupied"] for c in metrics["phv"]["normal"])

    def pair(name: str) -> tuple[int, float]:
        # (The log's Average row is over the stages used, not the chip: not used here.)
        used = int(totals[col[name]])
        return used, round(100.0 * used / CHIP[name], 2)

    sram, sram_pct = pair("SRAM")
    tcam, tcam_pct = pair("TCAM")
    salu, salu_pct = pair("Meter ALU")
    return Resources(stages=1 + max((int(s) for s in stages_used), default=-1), sram=sram,
                     sram_pct=sram_pct, tcam=tcam, tcam_pct=tcam_pct, salu=salu,
                     salu_pct=salu_pct, phv_bits=phv_bits,
                     phv_pct=round(100.0 * phv_bits / PHV_BITS, 2))


def over_budget(used: Resources, budget: dict[str, float]) -> list[str]:
    """The resources above their budget, as 'name used > budget' lines (empty: within).

    Keys starting with '_' are comments (where the figures come from)."""
    values = used.as_dict()
    return [f"{name} {values[name]:g} > {limit:g}" for name, limit in budget.items()
            if not name.startswith("_") and values[name] > limit]
