"""The LinkGuardian paper's stress-test numbers (SIGCOMM'23; the Protego text's §4.1, §4.5,
App. B), for printing beside ours and for the notebooks' overlays. Never used as results."""

from __future__ import annotations

TARGET = 1e-8
"Target effective loss of every stress test (§4)."

COPIES = {1e-5: 1, 1e-4: 1, 1e-3: 2}
"N from Eq. 2 at target 1e-8 (§4.1)."

THEORY_EFFECTIVE = {1e-5: 1e-10, 1e-4: 1e-8, 1e-3: 1e-9}
"p^(N+1) as the paper states it (§4.1)."

LG_100G = {1e-5: (1.43e-5, 5.97e-10, 98.76), 1e-4: (9.16e-5, 7.56e-9, 98.74),
           1e-3: (1.16e-3, 1.29e-9, 90.88)}
"""Fig. 8, LG at 100G: nominal loss -> (measured actual loss, effective loss, effective Gb/s),
the values the authors' simulator (NUS-SNL/linkguardian) uses for §4.7 (design brief §9)."""

LG_100G_1E3_SPEED_REDUCTION = 0.08
"§4.1: 'only an 8% reduction in the link's effective link speed' (LG, 100G, 1e-3)."

BUFFER_MAX_BYTES = {("lg", 25.0): {"tx": 3_600, "rx": 60_000},
                    ("lg", 100.0): {"tx": 90_000, "rx": 90_000},
                    ("lg_nb", 25.0): {"tx": 3_600, "rx": 0},
                    ("lg_nb", 100.0): {"tx": 24_400, "rx": 0}}
"""Fig. 12 / §4.5: Tx and Rx buffer maxima over all loss rates ('at most'); LG_NB needs no Rx
buffer, and its Tx buffer is LG's at 25G and 24.4 KB at 100G. The authors' numbers are the
watermarks of the recirculation queues, in 80-byte cells (NUS-SNL/linkguardian:
`poll_tx_buffer_usage`, `poll_rx_counters.py`, `analyze_expt_data.py`)."""

BUFFER_MEASURED = {("lg_nb", 100.0, "tx")}
"""Entries of BUFFER_MAX_BYTES that are a measured value, not a bound: LG_NB's Tx buffer at
100G is 'about 3x lower (24.4 KB)' than LG's."""

MAX_RETX_DELAY_US = {25.0: 6.0, 100.0: 5.5}
"App. B.1 / Fig. 17: maximum retransmission delay over ~1M recoveries of 1518 B packets."

ACK_NO_TIMEOUT_US = {25.0: 7.5, 100.0: 7.0}
"App. B.1: the ackNoTimeout set above those maxima."

T_FLIGHT_RESUME_US = {25.0: 1.9, 100.0: 1.6}
"App. B.1: maximum time from a resume decision to traffic arriving again."

RECIRC_OVERHEAD_PCT = {
    (25.0, "tx"): {1e-5: 0.45, 1e-4: 0.449, 1e-3: 0.444},
    (25.0, "rx"): {1e-5: 0.661, 1e-4: 0.662, 1e-3: 0.664},
    (100.0, "tx"): {1e-5: 0.663, 1e-4: 0.657, 1e-3: 0.608},
    (100.0, "rx"): {1e-5: 0.657, 1e-4: 0.658, 1e-3: 0.662},
}
"Table 4: recirculation overhead (% of the pipe's forwarding capacity), LG."

CONSECUTIVE_LOSS_COVERAGE = (5, 0.999999, 5e-2)
"""App. B.2 / §3.5: 5 one-bit registers (5 consecutive losses per notification) handle
99.9999% of loss events at 5% loss (Fig. 18 measures runs at 1% and 5%)."""

TIMEOUTS = (476, 31_000_000)
"§4.1: 476 ackNo timeouts in ~31M loss events over all LG experiments of Fig. 8."
