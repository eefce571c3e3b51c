/* TNA LinkGuardian: constants, the wire format (as p4/include/headers.p4), and metadata. */
#ifndef LGT_HEADERS_P4
#define LGT_HEADERS_P4

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<16> ETHERTYPE_LG   = 0xABCD;
const bit<16> ETHERTYPE_PFC  = 0x8808;

typedef bit<2> lg_type_t;
const lg_type_t LG_TYPE_DATA     = 0;
const lg_type_t LG_TYPE_ACK      = 1;
const lg_type_t LG_TYPE_ACK_LOSS = 2;
const lg_type_t LG_TYPE_CTRL     = 3;

/* What a pass is (carried in lg_carry_h across the TM, mirrors and recirculation). Every
 * lg_carry_h field is whole bytes: Tofino writes a PHV container from at most two sources. */
typedef bit<8> lg_kind_t;
const lg_kind_t KIND_NONE   = 0;
const lg_kind_t KIND_TXCOPY = 1;   /* sender: Tx-buffer copy looping through the recirc port */
const lg_kind_t KIND_RXBUF  = 2;   /* receiver: packet in the reordering buffer */
const lg_kind_t KIND_NOTIFY = 4;   /* receiver: loss notification (ingress mirror) */
const lg_kind_t KIND_PAUSE  = 5;   /* receiver: PFC pause (ingress mirror) */
const lg_kind_t KIND_RESUME = 6;   /* receiver: PFC resume (ingress mirror) */
const lg_kind_t KIND_DUMMY  = 7;   /* sender: dummy, from a packet-generator timer packet */
const lg_kind_t KIND_ACK    = 8;   /* receiver: explicit ACK, from a timer packet */
const lg_kind_t KIND_RETX   = 9;   /* sender: one retransmitted copy (multicast replica) */

/* Sequence numbers are (era, seq_no), 17 bits, held as seq17 ++ 15w0 in 32-bit registers, so
 * 32-bit wrap-around is 17-bit serial arithmetic and a stateful ALU compares by sign. */
const bit<32> SEQ_STEP = 32w1 << 15;
/* The receive window, seq32: a fresh frame more than 4096 seqs ahead of `expected` or behind it
 * is outside (p4/include/defines.p4 LG_SEQ_WINDOW); ahead: gap[31:27] == 0, behind: == 31. */
const bit<32> SEQ_WINDOW = 32w4096 << 15;
/* reTxReqs: per port 4096 sequence numbers; LG_HOLE_REGS one-bit registers = K on Tofino. */
typedef bit<20> hole_idx_t;        /* port[7:0] ++ seq[11:0] */
/* LG_NB de-duplication: per port 2^LG_SEEN_BITS sequence numbers (a register lives in one
 * stage): 2048 on Tofino, 1024 on Tofino 2 (512K x 8 bits finds no stage there). */
#if __TARGET_TOFINO__ == 2
typedef bit<18> seen_idx_t;        /* port[7:0] ++ seq[9:0] */
#define LG_SEEN_BITS 10
#else
typedef bit<19> seen_idx_t;        /* port[7:0] ++ seq[10:0] */
#define LG_SEEN_BITS 11
#endif
const bit<8> LG_MAX_HOLES_TNA = 4;
/* A receiver port's two mirror sessions: loss notifications through port_session (the control
 * plane gives it the high-priority queue: a later leading ACK piggybacked on data must not
 * overtake a notification), PFC frames through port_session + PFC_SESSION_OFFSET (queue 0):
 * half the mirror ids (MirrorId_t: 10 bits on Tofino, 8 on Tofino 2). */
#if __TARGET_TOFINO__ == 2
const bit<32> PFC_SESSION_OFFSET = 128;
#else
const bit<32> PFC_SESSION_OFFSET = 512;
#endif
#define LG_PORTS 512

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header lg_data_h {
    bit<2>  pkt_type;
    bit<1>  more;
    bit<1>  era;
    bit<1>  retx;
    bit<1>  dummy;
    bit<1>  blocking;
    bit<1>  rx_buffered;
    bit<16> seq_no;
}

header lg_ack_h {
    bit<2>  pkt_type;
    bit<1>  piggybacked;
    bit<1>  era;
    bit<1>  xoff;
    bit<3>  pad;
    bit<16> leading_ack;
}

header lg_loss_h {
    bit<8>  hole_size;
    bit<16> first_lost;
}

header lg_ctrl_h {
    bit<2>  pkt_type;
    bit<1>  pause;
    bit<5>  pad;
    bit<16> rx_buffer_kb;
}

header lg_next_h {
    bit<16> ether_type;
}

/* IEEE 802.1Qbb PFC frame body (after an Ethernet header of EtherType 0x8808). */
header pfc_h {
    bit<16> opcode;          /* 0x0101 */
    bit<16> class_enable;    /* one bit per priority */
    bit<128> quanta;         /* pause time per priority, 8 x 16 bits */
}

header ipv4_h {
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

/* LG's state for the next pass: the bridged header (ingress -> egress), the mirror header of
 * every mirrored copy, and the header a looping packet carries from egress back to ingress. */
header lg_carry_h {
    lg_kind_t kind;
    bit<8>  first_pass;      /* Tx copy: 1 on its first loop */
    bit<8>  skip;            /* reordering buffer: 1 = the ackNoTimeout expired, skip a seq */
    bit<8>  rx_update;       /* egress: 1 = advance the advertised leading ACK of `port` */
    bit<32> ack;             /* seq32: leading ACK to advertise */
    bit<16> port;            /* protected port the pass belongs to */
    bit<16> buf_len;         /* bytes accounted in a Tx/Rx buffer */
    bit<16> first_lost;      /* notification: first hole */
    bit<8>  ack_repeat;      /* receiver: explicit ACKs allowed after this update */
    bit<8>  hole_size;       /* notification: number of holes */
}

struct headers_t {
    lg_carry_h carry;
    ethernet_h ethernet;
    lg_data_h  lg_data;
    lg_ack_h   lg_ack;
    lg_loss_h  lg_loss;
    lg_ctrl_h  lg_ctrl;
    lg_next_h  lg_next;
    pfc_h      pfc;
    ipv4_h     ipv4;
    pktgen_timer_header_t timer;
}

/* The per-port configuration, the same fields as v1model's lg_port_cfg_t. */
struct lg_port_cfg_t {
    bit<8>  tx_epoch;
    bit<1>  tx_on;
    bit<1>  tx_blocking;
    bit<16> tx_mgid;
    bit<8>  dummy_repeat;
    bit<8>  rx_epoch;
    bit<1>  rx_on;
    bit<8>  rx_max_holes;
    bit<32> rx_timeout_us;
    bit<32> rx_pause_bytes;
    bit<32> rx_resume_bytes;
    bit<8>  ack_repeat;
    bit<32> port_session;
    bit<19> ecn_qdepth;
    bit<32> drop_threshold;
    bit<32> tx_pause_timeout_us;
}

struct lg_global_cfg_t {
    bit<9>  recirc_port;
    bit<32> recirc_session;
    bit<3>  prio_normal;
    bit<3>  prio_high;
    bit<9>  loop_port;
}

struct pair_t {
    bit<32> lo;
    bit<32> hi;
}

struct ig_meta_t {
    bit<9>  port;            /* protected port the pass belongs to (set by the parser) */
    lg_global_cfg_t g;
    lg_port_cfg_t pc;        /* the port this pass belongs to */
    lg_carry_h mirror;       /* the mirror header of an ingress mirror */
    MirrorId_t session;
    bit<1>  looped;          /* came back through a recirculation port */
    bit<1>  txcopy;          /* ... as a Tx-buffer copy (set by the parser) */
    /* What a looping packet brought in lg_carry_h (copied by the parser, 0 on a fresh frame):
     * read from here, ingress does not wait for the table that starts a fresh lg_carry_h. */
    bit<8>  in_first_pass;
    bit<8>  in_skip;
    bit<16> in_buf_len;
    bit<1>  deliver;
    bit<1>  drop;
    bit<32> seq;             /* seq32 of lg_data */
    bit<32> ack_seq;         /* seq32 of lg_ack's leading_ack */
    bit<32> now;             /* ingress time in 1.024 us units (ns >> 10) */
    bit<32> ref;             /* now - rx_timeout_us */
    bit<16> rx_len;          /* bytes a frame takes in the reordering buffer */
    bit<8>  tag;             /* LG_NB: 1 ++ seq17[16:LG_SEEN_BITS], lg_data's seq window */
    bit<12> hs0;             /* reTxReqs register j is accessed at seq hs_j (port ++ hs_j) */
    bit<12> hs1;
    bit<12> hs2;
    bit<12> hs3;
    bit<8>  tx_ahead;        /* Tx copy: 1 = ahead of the leading ACK */
    bit<1>  h0;              /* Tx copy: reTxReqs bits found (and cleared) */
    bit<1>  h1;
    bit<1>  h2;
    bit<1>  h3;
    bit<8>  verdict;         /* receiver, LG: Alg. 1's verdict (ORDER_*) */
    bit<8>  fresh;           /* receiver, LG_NB: 1 = the first copy of a retransmission */
    bit<8>  pfc;             /* receiver: 1 = send a PFC pause, 2 = a resume */
    bit<8>  kcap;            /* receiver: K = min(rx_max_holes, LG_MAX_HOLES_TNA), at least 1 */
    /* Forwarding, looked up for every pass in the first stage, used where a frame is
     * delivered: l3 0 miss, 1 route, 2 drop; l2 1 port, 2 flood, 3 drop. */
    bit<8>  l3;
    bit<9>  l3_port;
    bit<48> l3_dmac;
    bit<8>  l2;
    bit<9>  l2_port;
    bit<16> l2_group;
    bit<9>  out_port;        /* the port a delivered frame leaves by (for counter A) */
}

struct eg_meta_t {
    lg_port_cfg_t ec;        /* egress_port's configuration */
    lg_global_cfg_t g;
    lg_carry_h mirror;       /* the mirror header of an egress mirror */
    MirrorId_t session;
    bit<1>  drop;
}

#endif
