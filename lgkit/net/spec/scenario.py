"""Experiment scenarios (YAML in workloads/): topology, corruption, flow, phases, corruptd."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from lgkit.control.corruptd import CorruptdParams
from lgkit.core.specfile import KIT_ROOT, read_spec
from lgkit.sw.switch.loss import LossModel

SCENARIO_DIR = KIT_ROOT / "workloads"
PHASES = ("lg_off", "lg_on", "corruptd")
"lg_off: no protection; lg_on: LinkGuardian on from the start; corruptd: corruptd decides."


FLOW_RATE_MBPS = 10.0
"""Flow lengths in scenarios are written for links of this rate (the built-in target's
default): a run on slower links lengthens its flows to carry as many frames
(`at_link_rate`), so corruptd's window (counted in frames) fills at the same point."""


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


def at_link_rate(scenario: Scenario, rate_mbps: float | None) -> Scenario:
    """The scenario with its flow lengthened by FLOW_RATE_MBPS / rate_mbps on slower links."""
    if rate_mbps is None or rate_mbps >= FLOW_RATE_MBPS:
        return scenario
    seconds = round(scenario.flow.seconds * FLOW_RATE_MBPS / rate_mbps, 1)
    return replace(scenario, flow=replace(scenario.flow, seconds=seconds))


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


def in_range(what: str, value: object, low: float, high: float, *, low_open: bool = False,
             high_open: bool = False) -> float:
    """`value` as a float if it is a finite number in the range, else ScenarioError naming
    `what` (an interval written [low, high] with the open ends as parentheses)."""
    number = value if isinstance(value, int | float) and not isinstance(value, bool) else math.nan
    ok = math.isfinite(number) and (low < number if low_open else low <= number) and \
        (number < high if high_open else number <= high)
    if not ok:
        interval = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
        raise ScenarioError(f"{what} must be a number in {interval}, got {value!r}")
    return float(number)


def check_scenario(scenario: Scenario, hosts: list[str]) -> None:
    """Every value in range and both flow ends hosts of the topology (ScenarioError), so that
    nothing is built for a scenario that cannot run."""
    flow = scenario.flow
    for role, host in (("client", flow.client), ("server", flow.server)):
        if host not in hosts:
            raise ScenarioError(f"scenario {scenario.name}: flow {role} '{host}' is not a host "
                                f"of topology {scenario.topology} (hosts: {', '.join(hosts)})")
    if flow.client == flow.server:
        raise ScenarioError(f"scenario {scenario.name}: the flow's client and server are both "
                            f"'{flow.client}'")
    in_range("flow seconds", flow.seconds, 0, 86400, low_open=True)
    in_range("loss rate", scenario.loss.rate, 0, 1, high_open=True)
    in_range("target_loss", scenario.target_loss, 0, 1, low_open=True, high_open=True)
    params = scenario.corruptd
    in_range("corruptd interval_s", params.interval_s, 0, 3600, low_open=True)
    in_range("corruptd window_frames", params.window_frames, 1, 1e12)
    in_range("corruptd threshold", params.threshold, 0, 1, low_open=True)
