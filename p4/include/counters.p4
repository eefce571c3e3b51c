/* Measurement counters (Fig. 7 points A-D and LG events) and buffer-occupancy registers. */
#ifndef LG_COUNTERS_P4
#define LG_COUNTERS_P4

/* Fig. 7: A = packets routed to a port, B = frames put on a port's link,
 * C = frames received from a port's link, D = packets delivered onward that came from a port. */
counter(LG_PORTS, CounterType.packets_and_bytes) lg_cnt_a;
counter(LG_PORTS, CounterType.packets_and_bytes) lg_cnt_b;
counter(LG_PORTS, CounterType.packets_and_bytes) lg_cnt_c;
counter(LG_PORTS, CounterType.packets_and_bytes) lg_cnt_d;

/* Receiver events, indexed by the protected (ingress) port. */
counter(LG_PORTS, CounterType.packets) lg_cnt_loss_events;    /* gaps detected (notifications) */
counter(LG_PORTS, CounterType.packets) lg_cnt_dups;           /* duplicates dropped */
counter(LG_PORTS, CounterType.packets) lg_cnt_timeouts;       /* ackNoTimeout expiries */
counter(LG_PORTS, CounterType.packets) lg_cnt_pauses;         /* pause frames sent */
counter(LG_PORTS, CounterType.packets) lg_cnt_resumes;        /* resume frames sent */
counter(LG_PORTS, CounterType.packets) lg_cnt_acks;           /* explicit ACKs sent */
counter(LG_PORTS, CounterType.packets) lg_cnt_out_of_window;  /* data frames outside the window */
/* Sender events, indexed by the protected (egress) port. */
counter(LG_PORTS, CounterType.packets) lg_cnt_retx;           /* retransmitted copies sent */
counter(LG_PORTS, CounterType.packets) lg_cnt_dummies;        /* dummies sent */
counter(LG_PORTS, CounterType.packets) lg_cnt_corrupt_drops;  /* frames the emulator dropped */
counter(LG_PORTS, CounterType.packets) lg_cnt_pause_expiries; /* pauses that timed out */
counter(LG_PORTS, CounterType.packets) lg_cnt_hold_expiries;  /* awaited hold tickets that timed out */

/* Lost sequence numbers: detected and beyond K (never notified). Registers, since a gap adds
 * more than one. */
register<bit<32>>(LG_PORTS) lg_rx_lost;
register<bit<32>>(LG_PORTS) lg_rx_unrecoverable;

/* Buffer occupancy, current and maximum, in bytes and packets. */
register<bit<32>>(LG_PORTS) lg_tx_buf_bytes;
register<bit<32>>(LG_PORTS) lg_tx_buf_pkts;
register<bit<32>>(LG_PORTS) lg_tx_buf_max_bytes;
register<bit<32>>(LG_PORTS) lg_tx_buf_max_pkts;
register<bit<32>>(LG_PORTS) lg_rx_buf_bytes;
register<bit<32>>(LG_PORTS) lg_rx_buf_pkts;
register<bit<32>>(LG_PORTS) lg_rx_buf_max_bytes;
register<bit<32>>(LG_PORTS) lg_rx_buf_max_pkts;

/* The largest enq_qdepth (packets) of a packet leaving a port since the control plane last wrote
 * 0 here: the queue-depth series of Fig. 9 (a poller reads and clears it). */
register<bit<32>>(LG_PORTS) lg_qdepth_max;

#endif
