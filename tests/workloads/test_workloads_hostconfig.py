"""Host TCP settings: what is written, read back and refused (a fake host's shell)."""

from __future__ import annotations

import re

import pytest

from lgkit.workloads.hostconfig import HostConfigError, HostSettings, apply, read_back


class FakeHost:
    """Answers the sysctl and ip commands apply() issues, like a namespace's shell."""

    name = "lgh1"

    def __init__(self, stuck: str | None = None) -> None:
        self.sysctl = {"tcp_sack": 1, "tcp_recovery": 1, "tcp_early_retrans": 3,
                       "tcp_timestamps": 1, "tcp_ecn": 2, "tcp_no_metrics_save": 0}
        self.routes = ["10.0.0.0/24 dev lgh1-eth0 proto kernel scope link src 10.0.0.1"]
        self.stuck = stuck
        self.commands: list[str] = []

    def cmd(self, *args: str) -> str:
        line = " ".join(args)
        self.commands.append(line)
        if m := re.fullmatch(r"sysctl -qw net\.ipv4\.(\w+)=(\d+)", line):
            if m.group(1) != self.stuck:
                self.sysctl[m.group(1)] = int(m.group(2))
            return ""
        if m := re.fullmatch(r"sysctl -n net\.ipv4\.(\w+)", line):
            return f"{self.sysctl[m.group(1)]}\n"
        if line == "ip route show":
            return "".join(f"{r} \n" for r in self.routes)
        if m := re.fullmatch(r"ip route replace (.*) rto_min (\d+)ms", line):
            self.routes = [f"{m.group(1)} rto_min lock {m.group(2)}ms"]
            return ""
        return ""


def test_settings_are_applied_per_host_and_read_back() -> None:
    host = FakeHost()
    found = apply(host, HostSettings(ecn=True, rto_min_ms=48))
    assert found["tcp_timestamps"] == 0 and found["tcp_ecn"] == 1 and found["tcp_sack"] == 1
    assert found["tcp_no_metrics_save"] == 1 and found["rto_min_ms"] == [48]
    assert "ip tcp_metrics flush all" in host.commands
    # applying again replaces the route's rto_min instead of adding a second one
    found = apply(host, HostSettings(rto_min_ms=5))
    assert found["rto_min_ms"] == [5] and found["tcp_ecn"] == 0
    assert host.routes == ["10.0.0.0/24 dev lgh1-eth0 proto kernel scope link src 10.0.0.1 "
                           "rto_min lock 5ms"]


def test_a_setting_that_does_not_take_is_an_error() -> None:
    with pytest.raises(HostConfigError, match="lgh1: tcp_timestamps is 1, wanted 0"):
        apply(FakeHost(stuck="tcp_timestamps"), HostSettings())


def test_read_back_without_rto_min() -> None:
    assert read_back(FakeHost())["rto_min_ms"] == [None]
