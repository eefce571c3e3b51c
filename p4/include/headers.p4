/* Header and metadata types: Ethernet, the LinkGuardian shim (EtherType 0xABCD), IPv4. */
#ifndef LG_HEADERS_P4
#define LG_HEADERS_P4

header ethernet_t {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

/* LG data header (3 bytes): on every protected frame, retransmission and dummy. */
header lg_data_t {
    bit<2>  pkt_type;          /* LG_TYPE_DATA */
    bit<1>  more;          /* 1: an lg_ack header follows (piggybacked ACK) */
    bit<1>  era;           /* toggles each time seq_no wraps */
    bit<1>  retx;          /* 1: a retransmitted copy */
    bit<1>  dummy;         /* 1: the dummy packet; seq_no = last sequence number sent */
    bit<1>  blocking;      /* 1: LG (ordered) mode, 0: LG_NB */
    bit<1>  rx_buffered;   /* 1: sitting in the receiver's reordering buffer */
    bit<16> seq_no;
}

/* LG ACK header (3 bytes): piggybacked, explicit, or the start of a loss notification. */
header lg_ack_t {
    bit<2>  pkt_type;          /* LG_TYPE_ACK or LG_TYPE_ACK_LOSS */
    bit<1>  piggybacked;   /* 1: a payload (inner EtherType + packet) follows */
    bit<1>  era;           /* era of leading_ack */
    bit<1>  xoff;          /* receiver's backpressure state: 1 = paused */
    bit<3>  pad;
    bit<16> leading_ack;   /* latest sequence number the receiver has seen */
}

/* Loss-notification extension (3 bytes): follows an lg_ack header of type ACK_LOSS. */
header lg_loss_t {
    bit<8>  hole_size;     /* number of consecutive lost sequence numbers */
    bit<16> first_lost;    /* first lost sequence number */
}

/* Pause / resume frame (3 bytes): Alg. 2 backpressure from receiver to sender. */
header lg_ctrl_t {
    bit<2>  pkt_type;          /* LG_TYPE_CTRL */
    bit<1>  pause;         /* 1 = pause, 0 = resume */
    bit<5>  pad;
    bit<16> rx_buffer_kb;  /* receiver's reordering-buffer occupancy, KiB (informative) */
}

/* Inner EtherType (2 bytes): present when the LG frame carries a payload. */
header lg_next_t {
    bit<16> ether_type;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<6>  dscp;
    bit<2>  ecn;
    bit<16> total_len;
    bit<16> identification;
    bit<3>  flags;
    bit<13> frag_offset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdr_checksum;
    bit<32> src_addr;
    bit<32> dst_addr;
}

struct headers_t {
    ethernet_t ethernet;
    lg_data_t  lg_data;
    lg_ack_t   lg_ack;
    lg_loss_t  lg_loss;
    lg_ctrl_t  lg_ctrl;
    lg_next_t  lg_next;
    ipv4_t     ipv4;
}

/* State that survives clones and recirculation (field list LG_FIELD_LIST). */
struct lg_carry_t {
    @field_list(LG_FIELD_LIST) lg_kind_t kind;        /* what this pass is */
    @field_list(LG_FIELD_LIST) lg_kind_t clone_kind;  /* what a clone made in this pass is */
    @field_list(LG_FIELD_LIST) bit<9>  port;          /* protected port the pass belongs to */
    @field_list(LG_FIELD_LIST) bit<16> buf_len;       /* bytes accounted in a Tx/Rx buffer */
    @field_list(LG_FIELD_LIST) bit<1>  first_pass;    /* Tx copy: first loop */
    @field_list(LG_FIELD_LIST) bit<8>  gen;           /* courier generation */
    @field_list(LG_FIELD_LIST) bit<48> now;           /* egress time of the previous pass, us */
    @field_list(LG_FIELD_LIST) bit<32> ticket;        /* hold order at the sender */
    @field_list(LG_FIELD_LIST) bit<17> ack;           /* leading ack for a notification */
    @field_list(LG_FIELD_LIST) bit<16> first_lost;    /* notification: first hole */
    @field_list(LG_FIELD_LIST) bit<8>  hole_size;     /* notification: number of holes */
}

/* Per-pass scratch state (not preserved). */
struct lg_local_t {
    bit<1>  deliver;        /* forward this packet onward with the forwarding tables */
    bit<1>  drop;           /* consume this packet */
    bit<1>  do_clone;       /* issue one I2E clone at the end of ingress */
    bit<32> clone_session;
    bit<48> now;            /* current time for this pass, us */
    bit<32> trunc_len;      /* truncate the transmitted frame to this length (0 = no) */
    bit<1>  e2e_clone;      /* issue one E2E clone at the end of egress */
    bit<32> e2e_session;
}

/* Run-time configuration (config.p4): what the control plane wrote as table entries, looked up
 * again in every pass. Zero (the value of metadata a pass starts with) leaves LG dormant. */
struct lg_global_cfg_t {
    bit<9>  recirc_port;    /* port whose queue takes clones on their way back to ingress */
    bit<32> recirc_session; /* clone session -> recirculation port */
    bit<3>  prio_normal;    /* queue priority of ordinary packets (1) */
    bit<3>  prio_high;      /* retransmissions, notifications (2) */
    bit<9>  loop_port;      /* port whose queue holds looping packets (0: recirc_port) */
}

struct lg_port_cfg_t {
    bit<8>  tx_epoch;       /* sender state belongs to this epoch: a new value resets it */
    bit<1>  tx_on;          /* sender role on this (egress) port */
    bit<1>  tx_blocking;    /* 1 = LG (ordered), 0 = LG_NB */
    bit<16> tx_mgid;        /* multicast group: N replicas of the port */
    bit<8>  dummy_repeat;   /* dummies allowed after each data packet */
    bit<8>  rx_epoch;       /* receiver state belongs to this epoch: a new value resets it */
    bit<1>  rx_on;          /* receiver role on this (ingress) port */
    bit<8>  rx_max_holes;   /* K: holes per notification (1..32) */
    bit<32> rx_timeout_us;  /* ackNoTimeout, us (0 = never) */
    bit<32> rx_pause_bytes; /* pauseThreshold, bytes (0 = no pause) */
    bit<32> rx_resume_bytes;/* resumeThreshold, bytes */
    bit<8>  ack_repeat;     /* explicit ACKs allowed after each update */
    bit<32> port_session;   /* clone session -> this port (couriers) */
    bit<19> ecn_qdepth;     /* CE mark at enq_qdepth >= this (0 = off) */
    bit<32> drop_threshold; /* emulated corruption: p * (2^32 - 1) */
    bit<32> tx_pause_timeout_us; /* a pause not refreshed for this long expires, us (0 = never) */
}

struct metadata_t {
    lg_carry_t lg;
    lg_local_t l;
    lg_global_cfg_t g;      /* global configuration */
    lg_port_cfg_t pc;       /* ingress: the port this pass belongs to (meta.lg.port) */
    lg_port_cfg_t oc;       /* ingress: the port a forwarded packet leaves by (egress_spec) */
    lg_port_cfg_t ec;       /* egress: egress_port */
}

#endif
