/* LinkGuardian constants: EtherTypes, LG packet types, pass kinds, queue priorities, sizes. */
#ifndef LG_DEFINES_P4
#define LG_DEFINES_P4

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<16> ETHERTYPE_LG   = 0xABCD;

/* The 2-bit type that leads every LG header. */
typedef bit<2> lg_type_t;
const lg_type_t LG_TYPE_DATA     = 0;
const lg_type_t LG_TYPE_ACK      = 1;
const lg_type_t LG_TYPE_ACK_LOSS = 2;
const lg_type_t LG_TYPE_CTRL     = 3;

/* Bytes the LG shim adds to a protected data frame (data header + inner EtherType). */
const bit<16> LG_DATA_OVERHEAD = 5;
/* Frame sizes of the control frames after truncation (Ethernet + LG headers). */
const bit<32> LG_LEN_ACK    = 17;   /* 14 + 3 */
const bit<32> LG_LEN_DUMMY  = 17;   /* 14 + 3 (+3 when an ACK rides on it) */
const bit<32> LG_LEN_NOTIFY = 20;   /* 14 + 3 + 3 */
const bit<32> LG_LEN_CTRL   = 17;   /* 14 + 3 */

/* What a pass through the pipeline is doing (carried in meta.lg.kind across passes). */
typedef bit<4> lg_kind_t;
const lg_kind_t KIND_NONE   = 0;    /* an ordinary packet */
const lg_kind_t KIND_TXCOPY = 1;    /* sender: buffered copy looping until acknowledged */
const lg_kind_t KIND_RXBUF  = 2;    /* receiver: out-of-order packet in the reordering buffer */
const lg_kind_t KIND_HELD   = 3;    /* sender: packet held while the link is paused */
const lg_kind_t KIND_NOTIFY = 4;    /* receiver: loss notification on its way out */
const lg_kind_t KIND_PAUSE  = 5;    /* receiver: pause frame on its way out */
const lg_kind_t KIND_RESUME = 6;    /* receiver: resume frame on its way out */
const lg_kind_t KIND_DUMMY  = 7;    /* sender: the self-replenishing dummy */
const lg_kind_t KIND_ACK    = 8;    /* receiver: the self-replenishing explicit ACK */
const lg_kind_t KIND_RETX   = 9;    /* sender: one retransmitted copy (multicast replica) */

/* v1model instance_type values (BMv2 simple_switch). */
const bit<32> INSTANCE_INGRESS_CLONE = 1;
const bit<32> INSTANCE_EGRESS_CLONE  = 2;
const bit<32> INSTANCE_RECIRC        = 4;

/* The one field list that carries meta.lg across clones and recirculation. */
#define LG_FIELD_LIST 1

/* Queue priorities (BMv2: 0 lowest). Clones always land in priority 0, the courier queue. */
const bit<3> PRIO_COURIER = 0;

/* Register sizes: per-port state is indexed by the 9-bit port number. */
#define LG_PORTS 512
/* Hole bitmaps: 4096 sequence numbers per port, 32 per word -> 128 words per port. */
#define LG_HOLE_WORDS 65536
/* The receiver's window: a data frame's seq must lie within this many sequence numbers of the
 * next one expected, either side. The hole bitmaps cover 4096 seqs, so no frame of this
 * epoch can be farther; one that is (corrupted, forged) is dropped and counted. */
const bit<17> LG_SEQ_WINDOW = 4096;
/* Hard cap on holes per loss notification (one 64-bit mask spans two 32-bit words). */
const bit<8> LG_MAX_HOLES_CAP = 32;

#endif
