"""iperf3 reports of parallel streams: per-interval throughput and retransmissions."""

from __future__ import annotations

import pytest

from lgkit.workloads.iperf import Interval, TcpFlow, WorkloadError, parse_report

PARALLEL = {
    "start": {"connected": [{"socket": 5}, {"socket": 7}]},
    "intervals": [
        {"sum": {"start": 0.0, "end": 0.1, "bits_per_second": 8.5e6, "retransmits": 2}},
        {"sum": {"start": 0.1, "end": 0.2, "bits_per_second": 9.0e6, "retransmits": 0}},
    ],
    "end": {"sum_sent": {"retransmits": 2},
            "sum_received": {"seconds": 0.2, "bytes": 218_750, "bits_per_second": 8.75e6}},
}


def test_parallel_streams_and_interval_throughput() -> None:
    result = parse_report(PARALLEL, "bbr")
    assert result.streams == 2 and result.goodput_mbps == pytest.approx(8.75)
    assert result.intervals == (Interval(0.0, 0.1, 8.5, 2), Interval(0.1, 0.2, 9.0, 0))
    assert result.retransmits_from(0.1) == 0


def test_flow_refuses_an_unavailable_congestion_control_and_bad_counts() -> None:
    with pytest.raises(WorkloadError, match=r"^nosuchcc: unavailable \(kernel offers "):
        TcpFlow(None, "10.0.0.3", 1.0, "nosuchcc")
    with pytest.raises(WorkloadError, match="at least 1"):
        TcpFlow(None, "10.0.0.3", 1.0, "cubic", parallel=0)


def test_flow_command_line() -> None:
    flow = TcpFlow(None, "10.0.0.3", 12.0, "cubic", parallel=4, interval_s=0.1)
    assert flow.argv == ["iperf3", "-c", "10.0.0.3", "-p", "5201", "-t", "12", "-J", "-C",
                         "cubic", "-P", "4", "-i", "0.1"]
