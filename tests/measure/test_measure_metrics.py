"""Every metric on synthetic series with known answers: loss, rates, buffers, link speed,
FCT percentiles with confidence intervals, retransmission delay, TCP statistics, P4 polls."""

from __future__ import annotations

import math
import struct

import finsy
import numpy as np
import pytest

from lgkit.measure import metrics, tcpstats, wirecap
from lgkit.measure.loss import PointCounts
from lgkit.measure.p4poll import Cell, P4Poller, cli_registers, read_cells, switch_reader
from lgkit.measure.results import RunStore, read_table


def test_loss_rates_from_counter_readings() -> None:
    before = PointCounts(a=1_000, b=1_010, c=1_000, d=990)
    after = PointCounts(a=11_000, b=11_110, c=11_000, d=10_990)
    # 10,000 packets entered, 10,100 frames went on the link (100 retransmissions), 100 frames
    # were lost on the link, 10,000 packets left the receiver: LG masked every loss.
    assert metrics.actual_loss(before, after) == pytest.approx(100 / 10_100)
    assert metrics.effective_loss(before, after) == 0.0
    lossy = PointCounts(a=11_000, b=11_010, c=10_900, d=10_890)
    assert metrics.effective_loss(before, lossy) == pytest.approx(100 / 10_000)


def test_rates_of_a_cumulative_counter() -> None:
    t = [0.0, 0.5, 1.0, 1.0, 2.0]
    total = [0, 500, 1500, 1500, 4500]
    r = metrics.rates(t, total)
    assert r[:2].tolist() == [1000.0, 2000.0] and math.isnan(r[2]) and r[3] == 3000.0


def test_occupancy_and_link_speed() -> None:
    occ = metrics.occupancy(np.arange(101, dtype=float))
    assert (occ.max, occ.p50, occ.p99, occ.mean, occ.samples) == (100, 50, 99, 50, 101)
    assert math.isnan(metrics.occupancy([]).max)
    assert metrics.effective_link_speed(9.2, 10.0) == pytest.approx(0.92)


def test_binomial_cdf_matches_the_closed_form() -> None:
    cdf = metrics.binomial_cdf(12, 0.3)
    exact = np.cumsum([math.comb(12, k) * 0.3 ** k * 0.7 ** (12 - k) for k in range(13)])
    assert np.allclose(cdf, exact)


def test_percentiles_with_exact_order_statistic_intervals() -> None:
    x = np.arange(1, 1001, dtype=float)  # 1..1000
    est = metrics.quantile_ci(x, 0.99)
    assert est.value == pytest.approx(990.01) and est.label == "p99"
    # K ~ Binomial(1000, 0.99) samples below the true p99: P(K <= 982) = 0.0138 <= 0.025 <
    # P(K <= 983) and P(K <= 995) = 0.971 < 0.975 <= P(K <= 996) = 0.990, so the 95% interval
    # is [x_(983), x_(997)] (closed form: math.comb)
    exact = np.cumsum([math.comb(1000, k) * 0.99 ** k * 0.01 ** (1000 - k)
                       for k in range(1001)])
    assert exact[982] <= 0.025 < exact[983] and exact[995] < 0.975 <= exact[996]
    assert (est.low, est.high) == (983.0, 997.0)
    # p99.99 of 1000 samples cannot be bounded above
    high = metrics.quantile_ci(x, 0.9999)
    assert math.isnan(high.high) and high.label == "p99.99"
    assert [e.label for e in metrics.tail(x)] == ["p99", "p99.9", "p99.99", "p99.999"]


def test_percentile_interval_covers_the_true_quantile() -> None:
    rng = np.random.default_rng(2)
    true = -math.log(1 - 0.99)  # p99 of Exp(1)
    hits = 0
    for _ in range(300):
        est = metrics.quantile_ci(rng.exponential(1.0, 2000), 0.99)
        hits += est.low <= true <= est.high
    assert hits / 300 >= 0.92  # nominal 95% over 300 trials


def _frame(seq: int, retx: bool = False, dummy: bool = False) -> bytes:
    era, low = seq >> 16, seq & 0xFFFF
    first = (era << 4) | (int(retx) << 3) | (int(dummy) << 2)
    return bytes(12) + struct.pack("!HBH", wirecap.ETHERTYPE_LG, first, low) + bytes(20)


def _pcap(path, records: list[tuple[float, bytes]]) -> None:
    out = bytearray(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1))
    for t, frame in records:
        sec, nsec = divmod(round(t * 1e9), 10**9)
        out += struct.pack("<IIII", sec, nsec, len(frame), len(frame)) + frame
    path.write_bytes(bytes(out) + b"\x01\x02")  # a torn record at the end


def test_retransmission_delay_from_a_capture(tmp_path) -> None:
    records = [
        (1.000_000, _frame(10)), (1.000_010, _frame(11)),
        (1.000_030, _frame(13)),                     # 12 lost: detected at 1.000030
        (1.000_040, _frame(14)),
        (1.000_045, _frame(12, retx=True)),          # recovered after 15 us
        (1.000_046, _frame(12, retx=True)),          # a second copy: not counted again
        (1.000_100, _frame(16, dummy=True)),         # the dummy reveals 15 and 16 lost
        (1.000_106, _frame(16, retx=True)),          # 16 after 6 us; 15 never comes
        (1.000_200, bytes(12) + b"\x08\x00" + bytes(30)),  # IPv4 frame: ignored
    ]
    path = tmp_path / "wire.pcap"
    _pcap(path, records)
    frames = list(wirecap.lg_data_frames(wirecap.read_pcap(path)))
    assert [f.seq for f in frames] == [10, 11, 13, 14, 12, 12, 16, 16]
    result = wirecap.retransmission_delays(frames)
    assert [round(d, 3) for d in result.delays_us] == [15.0, 6.0]
    assert result.unrecovered == 1


def test_retransmission_delay_across_the_era_wrap() -> None:
    top = (1 << 17) - 1
    frames = [wirecap.LgFrame(0.0, top - 1, False, False), wirecap.LgFrame(1e-6, 0, False,
                                                                           False),
              wirecap.LgFrame(3e-6, top, True, False)]
    result = wirecap.retransmission_delays(frames)
    assert [round(d, 3) for d in result.delays_us] == [2.0] and result.unrecovered == 0


SS = """State Recv-Q Send-Q Local Address:Port  Peer Address:Port Process
ESTAB 0      12345  10.0.0.1:43210      10.0.0.3:5201
\t cubic wscale:7,7 rto:204 rtt:1.75/0.5 ato:40 mss:1448 pmtu:1500 rcvmss:536 advmss:1448 \
cwnd:12 ssthresh:7 bytes_sent:150000 bytes_retrans:2896 bytes_acked:140000 segs_out:110 \
segs_in:60 data_segs_out:108 send 79.4Mbps lastsnd:1 pacing_rate 95.3Mbps \
delivery_rate 9.1Mbps busy:800ms unacked:5 retrans:1/2 lost:1 sacked:2 reordering:3 \
rcv_space:14480 minrtt:1.3
ESTAB 0      0      10.0.0.1:43212      10.0.0.3:5201
\t bbr wscale:7,7 rto:208 rtt:2/1 mss:1448 cwnd:20 bytes_acked:1 send 950Kbps
"""

NSTAT = """#kernel
IpInReceives                    1000               0.0
TcpOutSegs                      500                0.0
TcpRetransSegs                  7                  0.0
TcpExtTCPLossProbes             3                  0.0
"""


def test_ss_and_nstat_parsing() -> None:
    first, second = tcpstats.parse_ss(SS)
    assert first["cc"] == "cubic" and first["peer"] == "10.0.0.3:5201"
    assert (first["rtt_ms"], first["rttvar_ms"], first["rto"], first["cwnd"]) == (
        1.75, 0.5, 204.0, 12.0)
    assert (first["retrans_now"], first["retrans_total"], first["bytes_retrans"]) == (
        1, 2, 2896.0)
    assert first["send_mbps"] == pytest.approx(79.4)
    assert first["delivery_rate_mbps"] == pytest.approx(9.1)
    assert second["cc"] == "bbr" and second["send_mbps"] == pytest.approx(0.95)
    counters = tcpstats.parse_nstat(NSTAT)
    assert counters["TcpRetransSegs"] == 7 and counters["IpInReceives"] == 1000
    delta = tcpstats.nstat_delta({"TcpRetransSegs": 2}, counters)
    assert delta["TcpRetransSegs"] == 5 and delta["TcpExtTCPTimeouts"] == 0


def test_ss_sampler_keeps_matching_connections(tmp_path) -> None:
    store = RunStore("unit", {}, root=tmp_path)
    sampler = tcpstats.SsSampler(store, "ss", lambda argv: SS, {"phase": "lg"},
                                 interval_s=0.05, peer_port=5201)
    sampler._sample()
    rows = read_table(store.path, "ss")
    assert [r["cc"] for r in rows] == ["cubic", "bbr"] and rows[0]["phase"] == "lg"


def test_p4_poller_reads_counters_and_registers(tmp_path) -> None:
    calls: list[list] = []

    def p4rt_read(entities: list) -> list:
        calls.append(entities)
        return [finsy.P4CounterEntry("lg_cnt_b", index=2,
                                     data=finsy.P4CounterData(packet_count=7, byte_count=700)),
                finsy.P4CounterEntry("lg_cnt_c", index=2, data=None)]

    counters = [Cell("tx", "counter", "lg_cnt_b", 2), Cell("tx", "counter", "lg_cnt_c", 2)]
    values = read_cells(p4rt_read, counters)
    assert values[counters[0]] == {"packets": 7, "bytes": 700}
    assert values[counters[1]] == {"packets": 0, "bytes": 0}
    assert len(calls) == 1 and len(calls[0]) == 2  # one Read request per switch
    registers = [Cell("tx", "register", "lg_rx_buf_bytes", 2),
                 Cell("tx", "register", "lg_tx_buf_bytes", 2)]
    commands: list[list[str]] = []

    stored = {"lg_rx_buf_bytes": 3028, "lg_tx_buf_bytes": 0, "lg_qdepth_max": 9}

    def builtin_cli(lines: list[str]) -> str:  # as the built-in switch's control service
        commands.append(lines)
        answers = []
        for line in lines:
            verb, name, _, *value = line.split()
            answers.append(str(stored[name]) if verb == "register_read" else "")
            if verb == "register_write":
                stored[name] = int(value[0])
        return "".join(f"{a}\n" for a in answers)

    def bmv2_cli(lines: list[str]) -> str:
        return ("Obtaining JSON from switch...\nDone\nControl utility for runtime P4 table "
                "manipulation\nRuntimeCmd: MyEgress.lg_rx_buf_bytes[2]= 3028\n"
                "RuntimeCmd: lg_tx_buf_bytes[2]= 0\nRuntimeCmd: \n")

    assert commands == [] and cli_registers(builtin_cli, registers) == {
        registers[0]: {"value": 3028}, registers[1]: {"value": 0}}
    assert commands == [["register_read lg_rx_buf_bytes 2", "register_read lg_tx_buf_bytes 2"]]
    assert cli_registers(bmv2_cli, registers) == cli_registers(builtin_cli, registers)
    with pytest.raises(ValueError, match="2 cells"):
        cli_registers(lambda lines: "1\n", registers)
    deepest = Cell("tx", "register", "lg_qdepth_max", 2, clear=True)
    assert cli_registers(builtin_cli, [deepest]) == {deepest: {"value": 9}}
    assert commands[-1] == ["register_read lg_qdepth_max 2", "register_write lg_qdepth_max 2 0"]
    assert cli_registers(builtin_cli, [deepest]) == {deepest: {"value": 0}}
    cells = [counters[0], registers[0]]
    reader = switch_reader(p4rt_read, builtin_cli)
    store = RunStore("unit", {}, root=tmp_path)
    P4Poller(store, "p4", {"tx": reader}, cells, labels={"phase": "x"}).sample()
    rows = read_table(store.path, "p4")
    assert [(r["name"], r["packets"], r["value"]) for r in rows] == [
        ("lg_cnt_b", "7", ""), ("lg_rx_buf_bytes", "", "3028")]
    with pytest.raises(ValueError, match="counter or a register"):
        Cell("tx", "meter", "m", 0).entity()
