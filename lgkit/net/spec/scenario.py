"""Experiment scenarios (YAML in workloads/): topology, corruption, flow, phases, corruptd."""

from __future__ import annotations

from dataclasses import dataclass, field

from lgkit.control.corruptd import CorruptdParams
from lgkit.net.inject.lossmodel import LossModel
from lgkit.net.spec.specfile import KIT_ROOT, read_spec

SCENARIO_DIR = KIT_ROOT / "workloads"
PHASES = ("lg_off", "lg_on", "corruptd")
"lg_off: no protection; lg_on: LinkGuardian on from the start; corruptd: corruptd decides."


class ScenarioError(ValueError):
    """A scenario file is malformed."""


@dataclass(frozen=True)
class Flow:
    """One iperf3 TCP flow."""

    client: str
    server: str
    congestion: str = "cubic"
    seconds: float = 8.0


@dataclass(frozen=True)
class Scenario:
    """Everything one experiment run needs besides the target."""

    name: str
    topology: str
    loss: LossModel
    flow: Flow
    phases: list[str]
    corruptd: CorruptdParams = field(default_factory=CorruptdParams)
    target_loss: float = 1e-8


def load_scenario(name_or_path: str) -> Scenario:
    """Load workloads/NAME.yaml (or a path)."""
    path, raw = read_spec(name_or_path, SCENARIO_DIR, "scenario", ScenarioError)
    try:
        phases = list(raw.get("phases", ["lg_off"]))
        bad = [p for p in phases if p not in PHASES]
        if bad:
            raise ScenarioError(f"{path}: unknown phases {bad} (known: {', '.join(PHASES)})")
        return Scenario(
            name=path.stem, topology=raw["topology"],
            loss=LossModel(float(raw["loss_rate"]), raw.get("loss_model", "iid")),
            flow=Flow(**raw["flow"]), phases=phases,
            corruptd=CorruptdParams(**raw.get("corruptd", {})),
            target_loss=float(raw.get("target_loss", 1e-8)),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ScenarioError(f"{path}: malformed scenario ({exc})") from exc
