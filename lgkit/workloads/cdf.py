"""Flow-size distributions: the CDF files of workloads/cdf/ and inverse-CDF sampling."""

from __future__ import annotations

import bisect
import random
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

CDF_DIR = Path(__file__).resolve().parents[2] / "workloads" / "cdf"
INTERPOLATIONS = ("linear", "step")
"""linear: sizes are spread uniformly between two CDF points (the HPCC traffic generator's
reading); step: each listed size carries the probability step up to it (Homa's reading)."""


class CdfError(ValueError):
    """A CDF file is malformed (the message names the file and line)."""


@dataclass(frozen=True)
class FlowSizeCdf:
    """A flow-size distribution: sizes in bytes with their cumulative probabilities."""

    name: str
    sizes: tuple[int, ...]
    probs: tuple[float, ...]
    "Cumulative probabilities in [0, 1], non-decreasing, the last one 1."
    interpolation: str = "linear"
    source: str = ""
    "Where the numbers come from (URL of the file at a commit)."

    def __post_init__(self) -> None:
        if self.interpolation not in INTERPOLATIONS:
            raise CdfError(f"{self.name}: interpolation must be one of {INTERPOLATIONS}")
        if len(self.sizes) < 2 or len(self.sizes) != len(self.probs):
            raise CdfError(f"{self.name}: needs at least two (size, probability) points")
        if any(b < a for a, b in pairwise(self.sizes)):
            raise CdfError(f"{self.name}: sizes must not decrease")
        if any(b < a for a, b in pairwise(self.probs)):
            raise CdfError(f"{self.name}: probabilities must not decrease")
        if self.probs[0] < 0 or abs(self.probs[-1] - 1.0) > 1e-9:
            raise CdfError(f"{self.name}: probabilities must run from >= 0 up to 1")

    def quantile(self, u: float) -> int:
        """The size at cumulative probability u in [0, 1] (the inverse CDF)."""
        i = bisect.bisect_left(self.probs, u)
        if i == 0:
            return self.sizes[0]
        if i >= len(self.probs):
            return self.sizes[-1]
        if self.interpolation == "step":
            return self.sizes[i]
        p0, p1 = self.probs[i - 1], self.probs[i]
        s0, s1 = self.sizes[i - 1], self.sizes[i]
        return round(s0 + (s1 - s0) * (u - p0) / (p1 - p0))

    def sample(self, rng: random.Random, minimum: int = 1) -> int:
        """One size drawn from the distribution (at least `minimum` bytes)."""
        return max(minimum, self.quantile(rng.random()))

    def cdf(self, size: float) -> float:
        """P(flow size <= size)."""
        i = bisect.bisect_right(self.sizes, size)
        if i == 0:
            return 0.0
        if i >= len(self.sizes) or self.interpolation == "step":
            return self.probs[i - 1]
        s0, s1 = self.sizes[i - 1], self.sizes[i]
        p0, p1 = self.probs[i - 1], self.probs[i]
        return p0 + (p1 - p0) * (size - s0) / (s1 - s0)

    def mean(self) -> float:
        """Mean flow size in bytes."""
        total = 0.0
        for i in range(1, len(self.sizes)):
            step = self.probs[i] - self.probs[i - 1]
            if self.interpolation == "step":
                total += step * self.sizes[i]
            else:
                total += step * (self.sizes[i] + self.sizes[i - 1]) / 2
        return total


def available() -> list[str]:
    """Names of the CDFs shipped in workloads/cdf/."""
    return sorted(p.stem for p in CDF_DIR.glob("*.txt"))


def load_cdf(name_or_path: str) -> FlowSizeCdf:
    """Load workloads/cdf/NAME.txt (or a path): `# key: value` header lines, then one
    `size_bytes cumulative_probability` pair per line."""
    path = Path(name_or_path)
    if not path.suffix:
        path = CDF_DIR / f"{name_or_path}.txt"
    if not path.exists():
        raise CdfError(f"no flow-size CDF {name_or_path!r} (shipped: {', '.join(available())})")
    header: dict[str, str] = {}
    sizes: list[int] = []
    probs: list[float] = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        text = line.strip()
        if text.startswith("#"):
            key, sep, value = text[1:].partition(":")
            if sep and key.strip().isidentifier():
                header.setdefault(key.strip(), value.strip())
            continue
        if not text:
            continue
        try:
            size, prob = text.split()
            sizes.append(int(float(size)))
            probs.append(float(prob))
        except ValueError as exc:
            raise CdfError(f"{path}:{number}: expected 'size probability', got {text!r}") from exc
    scale = {"percent": 100.0, "fraction": 1.0}.get(header.get("cdf", "fraction"))
    if scale is None:
        raise CdfError(f"{path}: '# cdf:' must be percent or fraction")
    return FlowSizeCdf(path.stem, tuple(sizes), tuple(p / scale for p in probs),
                       header.get("interpolation", "linear"), header.get("source", ""))
