"""Scenario flow lengths follow the link rate: slower links (BMv2's default) run longer flows,
so corruptd's window, counted in frames, fills at the same point of the flow."""

from __future__ import annotations

from lgkit.core.targets import P4_TARGETS, TARGETS
from lgkit.net.spec.scenario import FLOW_RATE_MBPS, at_link_rate, load_scenario


def test_slower_links_run_proportionally_longer_flows() -> None:
    demo = load_scenario("demo")
    assert at_link_rate(demo, FLOW_RATE_MBPS) == demo
    assert at_link_rate(demo, 100.0) == demo  # faster links keep the scenario's length
    assert at_link_rate(demo, None) == demo  # Linux bridges: no rate set
    slower = at_link_rate(demo, FLOW_RATE_MBPS / 4)
    assert slower.flow.seconds == demo.flow.seconds * 4
    assert slower.flow.client == demo.flow.client and slower.phases == demo.phases


def test_bmv2_demo_flow_carries_as_many_frames_as_the_builtin_one() -> None:
    demo = load_scenario("demo")
    rates = {target: TARGETS[target].link_rate_mbps or 0.0 for target in P4_TARGETS}
    frames = {target: at_link_rate(demo, rate).flow.seconds * rate
              for target, rate in rates.items()}
    assert abs(frames["bmv2"] - frames["builtin"]) / frames["builtin"] < 0.01
