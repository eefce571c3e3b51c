"""iperf3 report parsing and congestion-control detection."""

from __future__ import annotations

from pathlib import Path

import pytest

from lgkit.workloads.iperf import WorkloadError, congestion_status, parse_report

REPORT = {
    "start": {"test_start": {"protocol": "TCP"}},
    "intervals": [
        {"sum": {"start": 0.0, "end": 1.0, "retransmits": 30}},
        {"sum": {"start": 1.0, "end": 2.0, "retransmits": 5}},
        {"sum": {"start": 2.0, "end": 3.0, "retransmits": 2}},
    ],
    "end": {
        "sum_sent": {"seconds": 8.0, "bytes": 20_000_000, "bits_per_second": 2.0e7,
                     "retransmits": 37},
        "sum_received": {"seconds": 8.01, "bytes": 19_900_000, "bits_per_second": 1.9875e7},
    },
}


def test_parse_goodput_and_retransmissions() -> None:
    result = parse_report(REPORT, "cubic")
    assert result.goodput_mbps == pytest.approx(19.875)
    assert result.retransmits == 37
    assert result.bytes_received == 19_900_000
    assert result.retransmits_from(1.0) == 7
    assert result.retransmits_from(1.5) == 2


def test_iperf3_error_is_reported() -> None:
    with pytest.raises(WorkloadError, match="unable to connect"):
        parse_report({"error": "unable to connect to server"}, "cubic")


def test_congestion_controls_match_the_kernel() -> None:
    available = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    assert congestion_status("cubic")[0]
    ok, why = congestion_status("dctcp")
    if "dctcp" in available or ok:
        assert ok
    else:
        assert why.startswith("dctcp: unavailable (kernel offers ")
