"""UDP stress: the receiver's accounting of loss, duplicates and reordering, and a paced run."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

from lgkit.workloads.udpstress import STAMP, UdpAccount, receive, send


def _feed(seqs: list[int]) -> UdpAccount:
    account = UdpAccount()
    for i, seq in enumerate(seqs):
        account.add(seq, sent_ns=1_000 * i, size=100, now_ns=1_000 * i + 5_000)
    return account


def _wait_bound(port: int) -> None:
    """Until a socket is bound to the UDP port (the receiver thread's; /proc/net/udp)."""
    deadline = time.monotonic() + 30
    while f":{port:04X} " not in Path("/proc/net/udp").read_text():
        assert time.monotonic() < deadline, f"nothing bound UDP port {port}"
        time.sleep(0.01)


def test_in_order_stream_has_nothing_to_report() -> None:
    account = _feed(list(range(50)))
    report = account.report(sent=50)
    assert report["unique"] == 50 and report["lost"] == 0 and report["reordered"] == 0
    assert report["duplicates"] == 0 and report["delay_p50_us"] == 5.0


def test_gaps_duplicates_and_reordering_are_counted_exactly() -> None:
    # 0..9 sent; 3 and 7 lost; 5 arrives after 6 (reordered); 2 arrives twice
    account = _feed([0, 1, 2, 2, 4, 6, 5, 8, 9])
    assert account.unique == 8 and account.duplicates == 1 and account.reordered == 1
    assert account.lost(sent=10) == 2 and account.lost() == 2
    assert account.report(sent=12)["lost"] == 4  # two more sent after 9, never seen
    assert account.report(sent=10)["loss_rate"] == pytest.approx(0.2)


def test_a_late_retransmission_counts_as_reordered_not_duplicate() -> None:
    account = _feed([0, 1, 3, 4, 5, 2])
    assert account.reordered == 1 and account.duplicates == 0 and account.lost(6) == 0


def test_large_sequence_numbers_grow_the_bitmap() -> None:
    account = _feed([0, 100_000, 5])
    assert account.unique == 3 and account.lost() == 100_001 - 3 and account.reordered == 1


def test_paced_sender_and_receiver_on_loopback() -> None:
    port_holder: list[int] = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port_holder.append(probe.getsockname()[1])
    port = port_holder[0]
    result: list[UdpAccount] = []
    thread = threading.Thread(target=lambda: result.append(
        receive(port, seconds=10, idle_s=0.5, bind="127.0.0.1")))
    thread.start()
    _wait_bound(port)
    sent = send("127.0.0.1", port, mbps=20.0, size=1000, seconds=0.5)
    thread.join(15)
    report = result[0].report(sent["sent"])
    # 20 Mb/s of 1028-byte datagrams for 0.5 s is ~1216 datagrams
    assert sent["sent"] == pytest.approx(20e6 * 0.5 / (1028 * 8), rel=0.02)
    assert sent["offered_mbps"] == pytest.approx(20.0, rel=0.05)
    assert report["unique"] == sent["sent"] and report["lost"] == 0
    assert report["goodput_mbps"] == pytest.approx(20.0 * 1000 / 1028, rel=0.15)


def test_receiver_counts_a_crafted_lossy_stream() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result: list[UdpAccount] = []
    thread = threading.Thread(target=lambda: result.append(
        receive(port, seconds=10, idle_s=0.3, bind="127.0.0.1")))
    thread.start()
    _wait_bound(port)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as tx:
        for seq in [0, 1, 2, 4, 3, 3, 6, 7, 9]:  # 5 and 8 missing, 3 late and twice
            tx.sendto(STAMP.pack(seq, time.monotonic_ns()) + bytes(50), ("127.0.0.1", port))
    thread.join(15)
    report = result[0].report(sent=10)
    assert (report["lost"], report["duplicates"], report["reordered"]) == (2, 1, 1)
