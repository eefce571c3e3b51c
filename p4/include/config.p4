/* Run-time configuration written by the control plane: per-port registers and globals. */
#ifndef LG_CONFIG_P4
#define LG_CONFIG_P4

/* Global (index 0). All default to 0, which leaves LG dormant and every packet in queue 0. */
register<bit<9>>(1)  lg_cfg_recirc_port;     /* port whose queue holds looping packets */
register<bit<32>>(1) lg_cfg_recirc_session;  /* clone session -> recirculation port */
register<bit<3>>(1)  lg_cfg_prio_normal;     /* queue priority of ordinary packets (1) */
register<bit<3>>(1)  lg_cfg_prio_high;       /* retransmissions, notifications (2) */

/* Per port (index = port number). */
register<bit<32>>(LG_PORTS) lg_cfg_port_session;   /* clone session -> this port (couriers) */
register<bit<1>>(LG_PORTS)  lg_cfg_tx_on;          /* sender role on egress port */
register<bit<1>>(LG_PORTS)  lg_cfg_tx_blocking;    /* 1 = LG (ordered), 0 = LG_NB */
register<bit<16>>(LG_PORTS) lg_cfg_tx_mgid;        /* multicast group: N replicas of the port */
register<bit<8>>(LG_PORTS)  lg_cfg_dummy_repeat;   /* dummies allowed after each data packet */
register<bit<1>>(LG_PORTS)  lg_cfg_rx_on;          /* receiver role on ingress port */
register<bit<8>>(LG_PORTS)  lg_cfg_rx_max_holes;   /* K: holes per notification (1..32) */
register<bit<32>>(LG_PORTS) lg_cfg_rx_timeout_us;  /* ackNoTimeout, us (0 = never) */
register<bit<32>>(LG_PORTS) lg_cfg_rx_pause_bytes; /* pauseThreshold, bytes (0 = no pause) */
register<bit<32>>(LG_PORTS) lg_cfg_rx_resume_bytes;/* resumeThreshold, bytes */
register<bit<8>>(LG_PORTS)  lg_cfg_ack_repeat;     /* explicit ACKs allowed after each update */
register<bit<19>>(LG_PORTS) lg_cfg_ecn_qdepth;     /* CE mark at enq_qdepth >= this (0 = off) */
register<bit<32>>(LG_PORTS) lg_cfg_drop_threshold; /* emulated corruption: p * (2^32 - 1) */

#endif
