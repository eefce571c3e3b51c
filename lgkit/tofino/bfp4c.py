"""Run bf-p4c on a TNA (or T2NA) program and read the resources it used from its reports."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass(frozen=True)
class Chip:
    """One bf-p4c target: its architecture and what one pipe has (the shares are of these)."""

    target: str
    arch: str
    stages: int
    totals: dict[str, int]       # mau.resources.log column -> blocks / ALUs of the pipe
    phv_classes: tuple[str, ...]  # metrics.json PHV classes the MAU reads and writes
    phv_bits: int


# Tofino 1: 12 MAU stages, each with 80 SRAM blocks, 24 TCAM blocks and 4 stateful (meter) ALUs;
# the normal PHV holds 64 x 8 + 96 x 16 + 64 x 32 = 4096 bits (the tagalong PHV, which the MAU
# cannot read, is not counted).
TOFINO = Chip("tofino", "tna", 12, {"SRAM": 12 * 80, "TCAM": 12 * 24, "Meter ALU": 12 * 4},
              ("normal",), 4096)
# Tofino 2: 20 stages with the same blocks per stage (bf-p4c's percentages of the stages used
# say so); the MAU reads the normal (3072 bits) and mocha (1024) PHV, not the dark (1024), which
# is counted no more than Tofino 1's tagalong (bf-p4c's phv_allocation_summary totals).
TOFINO2 = Chip("tofino2", "t2na", 20, {"SRAM": 20 * 80, "TCAM": 20 * 24, "Meter ALU": 20 * 4},
               ("normal", "mocha"), 4096)
CHIPS = {chip.target: chip for chip in (TOFINO, TOFINO2)}


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


def compile_tna(program: Path, out: Path, bf_p4c: str, chip: Chip = TOFINO) -> Resources:
    """Compile `program` for `chip` (TNA or T2NA) into `out` and read its resource reports."""
    cmd = [bf_p4c, "--std", "p4-16", "--target", chip.target, "--arch", chip.arch, "-g",
           "-o", str(out), str(program)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=program.parent, check=False)
    if proc.returncode != 0:
        errors = [line for line in (proc.stdout + proc.stderr).splitlines() if "error" in line]
        raise CompileError("; ".join(errors[:3]) or f"bf-p4c exited {proc.returncode}")
    return read_reports(out / "pipe" / "logs", chip)


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


def read_reports(logs: Path, chip: Chip = TOFINO) -> Resources:
    """Resources from bf-p4c's mau.resources.log (MAU) and metrics.json (PHV), as shares of
    `chip`."""
    text = (logs / "mau.resources.log").read_text(encoding="utf-8")
    rows = _table_rows(text)
    header = rows["header"]
    col = {name: i for i, name in enumerate(header)}
    stages_used = [label for label, cells in rows.items()
                   if label.isdigit() and any(c not in ("", "0") for c in cells[1:])]
    totals = rows["Totals"]
    metrics = json.loads((logs / "metrics.json").read_text(encoding="utf-8"))
    phv_bits = sum(c["bits_occupied"] for kind in chip.phv_classes
                   for c in metrics["phv"].get(kind, []))

    def pair(name: str) -> tuple[int, float]:
        # (The log's Average row is over the stages used, not the chip: not used here.)
        used = int(totals[col[name]])
        return used, round(100.0 * used / chip.totals[name], 2)

    sram, sram_pct = pair("SRAM")
    tcam, tcam_pct = pair("TCAM")
    salu, salu_pct = pair("Meter ALU")
    return Resources(stages=1 + max((int(s) for s in stages_used), default=-1), sram=sram,
                     sram_pct=sram_pct, tcam=tcam, tcam_pct=tcam_pct, salu=salu,
                     salu_pct=salu_pct, phv_bits=phv_bits,
                     phv_pct=round(100.0 * phv_bits / chip.phv_bits, 2))


def over_budget(used: Resources, budget: dict[str, float]) -> list[str]:
    """The resources above their budget, as 'name used > budget' lines (empty: within).

    Keys starting with '_' are comments (where the figures come from)."""
    values = used.as_dict()
    return [f"{name} {values[name]:g} > {limit:g}" for name, limit in budget.items()
            if not name.startswith("_") and values[name] > limit]
