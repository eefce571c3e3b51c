"""The randomized LinkGuardian soak (quick variant) in virtual time; `lgkit soak` runs 200k."""

from __future__ import annotations

import pytest

from lgkit.cli import main
from lgkit.sim.soak import SoakSpec, retransmission_delays, run_soak


@pytest.mark.slow
def test_quick_soak_lg_loses_nothing_and_keeps_order() -> None:
    result = run_soak(SoakSpec(packets=12_000, loss=1e-2, target=1e-6, seed=1, mode="lg"))
    assert result.copies == 2
    assert result.link_losses > 60  # the link really lost ~1% of its frames
    assert result.problems() == []
    assert result.effective_loss == 0.0 and result.in_order
    assert result.timeouts == 0
    assert 0 < result.tx_buffer_max_bytes < 20_000
    assert 0 < result.rx_buffer_max_bytes < 40_000
    assert len(result.retx_delays_ns) >= result.loss_events > 0
    assert result.ack_timeout_us == 8  # the paper's 7.5 us at 25G, in whole us
    assert max(result.retx_delays_ns) < 8_000  # recovery always beat the timeout


@pytest.mark.slow
def test_quick_soak_lg_nb_delivers_everything_once() -> None:
    result = run_soak(SoakSpec(packets=5_000, seed=2, mode="lg_nb"))
    assert result.problems() == []
    assert result.rx_buffer_max_bytes == 0
    assert result.delivered == result.unique == result.sent


def test_soak_without_lg_shows_the_loss() -> None:
    result = run_soak(SoakSpec(packets=5_000, seed=1, mode="off"))
    lost = result.sent - result.unique
    assert lost == result.link_losses > 0
    assert 0.004 < result.effective_loss < 0.02


@pytest.mark.slow
def test_same_seed_same_result() -> None:
    runs = [run_soak(SoakSpec(packets=2_000, seed=s, mode="lg", loss=2e-2)) for s in (5, 5, 6)]
    assert runs[0].digest == runs[1].digest
    assert runs[0].digest != runs[2].digest


def test_retransmission_delays_from_a_wire_log() -> None:
    from lgkit.core.frames import LgWire
    from lgkit.sim.scenario import WireRecord

    log = [WireRecord(100, LgWire(seq=0), 1000, False),
           WireRecord(200, LgWire(seq=1), 1000, True),
           WireRecord(300, LgWire(seq=2), 1000, False),      # reveals 1 at 300
           WireRecord(900, LgWire(seq=1, retx=True), 1000, False),
           WireRecord(950, LgWire(seq=1, retx=True), 1000, False),
           WireRecord(1000, LgWire(seq=4, dummy=True), 17, False)]  # reveals 3, 4
    assert retransmission_delays(log) == [600]


def test_soak_command_quick_and_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["soak", "--packets", "1500", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "effective loss rate: 0" in out and "checks: all passed" in out
    with pytest.raises(SystemExit) as exit_info:
        main(["soak", "--loss", "1.5"])
    assert exit_info.value.code == 2
    assert "argument --loss: 1.5 is not within [0, 1)" in capsys.readouterr().err


def test_only_packets_whose_every_copy_was_dropped_may_be_lost() -> None:
    from lgkit.sim.soak import SoakResult

    def result(lost: set[int], uncovered: set[int]) -> SoakResult:
        return SoakResult(spec=SoakSpec(packets=10), copies=2, sent=10, delivered=10 - len(lost),
                          unique=10 - len(lost), in_order=True, link_losses=3, loss_events=1,
                          retransmissions=2, duplicates_dropped=0, timeouts=1,
                          tx_buffer_max_bytes=1, rx_buffer_max_bytes=1, tx_buffer_end_bytes=0,
                          rx_buffer_end_bytes=0, lost_ids=lost, all_copies_lost=uncovered)

    assert result({5}, {5}).problems() == []
    assert result({5}, set()).problems() == ["1 packets lost onward although a copy arrived"]
