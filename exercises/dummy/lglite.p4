/* Generated from exercises/src/lglite.p4m by `python -m lgkit.course.generate`. */
/* LinkGuardian-lite: link-local loss recovery between two switches, simplified for teaching
 * from p4/linkguardian.p4 (docs/protocol.md has the full protocol).
 *
 * Port 1 faces a host, port 2 is the protected link. The upstream switch is the sender on
 * port 2, the downstream switch the receiver on port 2; the control plane says which through
 * the default action of lg_config. Every frame crossing the link while LG is on carries the LG
 * header (EtherType 0xABCD):
 *
 *   lg_t      kind(2) era(1) retx(1) dummy(1) pad(3) seq_no(16)             3 bytes
 *   lg_next_t ether_type(16)          the original EtherType; data frames only
 *   lg_ack_t  era(1) pad(7) leading_ack(16) first_lost(16) hole_size(8)    after kind = ACK
 *
 * A sequence number is 17 bits: era ++ seq_no. Sequence numbers compare in 17-bit serial
 * arithmetic: a is before b iff (b - a) mod 2^17 is in [1, 2^16).
 */
#include <core.p4>
#include <v1model.p4>

const bit<9>  HOST_PORT = 1;
const bit<9>  LINK_PORT = 2;
const bit<16> TYPE_LG = 0xABCD;
const bit<2>  KIND_DATA = 0;
const bit<2>  KIND_ACK = 1;
const bit<32> TX_SESSION = 100;     /* clone session of the Tx-buffer copies (-> port 2) */
const bit<32> ACK_SESSION = 101;    /* clone session of ACKs and loss notifications (-> port 2) */
const bit<32> DUMMY_SESSION = 102;  /* clone session of dummy packets (-> port 2) */
const bit<3>  PRIO_LOW = 0;         /* queue priorities (--priority-queues 3): dummies and the
                                       looping Tx copies, which must not hold up data */
const bit<3>  PRIO_DATA = 1;
const bit<3>  PRIO_HIGH = 2;
const bit<17> HOLE_SLOTS = 4096;    /* hole bitmaps keep seq mod 4096 */
const bit<32> ACK_FRAME_BYTES = 23; /* Ethernet + lg_t + lg_ack_t */
const bit<32> DUMMY_FRAME_BYTES = 17; /* Ethernet + lg_t */

/* lg_stats counter indexes (read them over P4Runtime); MyEgress.lg_sent counts frames put on
 * the link (B). */
const bit<32> STAT_REVEALED = 0;     /* loss events revealed by a dummy (exercise 4) */
const bit<32> STAT_RECEIVED = 1;     /* frames received from the link (C) */
const bit<32> STAT_LOSS_EVENTS = 2;  /* gaps detected by the receiver */
const bit<32> STAT_NOTIFIED = 3;     /* loss notifications received by the sender */
const bit<32> STAT_RETX = 4;         /* Tx copies retransmitted */
const bit<32> STAT_DELIVERED = 5;    /* packets delivered to the host port (D) */
const bit<32> STAT_DUPLICATES = 6;   /* copies dropped as duplicates */
const bit<32> STAT_TIMEOUTS = 7;     /* holes skipped by the ackNo timeout */

header ethernet_t {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header lg_t {
    bit<2>  kind;
    bit<1>  era;
    bit<1>  retx;
    bit<1>  dummy;
    bit<3>  pad;
    bit<16> seq_no;
}

header lg_next_t {
    bit<16> ether_type;
}

header lg_ack_t {
    bit<1>  era;
    bit<7>  pad;
    bit<16> leading_ack;
    bit<16> first_lost;
    bit<8>  hole_size;
}

struct headers {
    ethernet_t ethernet;
    lg_t       lg;
    lg_ack_t   lg_ack;
    lg_next_t  lg_next;
}

struct metadata {
    /* carried across clones and recirculation (v1model resets everything else) */
    @field_list(1) bit<1>  make_ack;     /* an I2E clone that becomes an ACK / notification */
    @field_list(1) bit<17> ack_leading;
    @field_list(1) bit<16> ack_first_lost;
    @field_list(1) bit<8>  ack_holes;
    @field_list(1) bit<1>  tx_copy;      /* a Tx-buffer copy looping through recirculation */
    @field_list(1) bit<1>  tx_first;     /* ... on its first loop */
    @field_list(1) bit<1>  make_dummy;   /* an I2E clone that becomes the dummy */
    @field_list(1) bit<1>  buffered;     /* in the receiver's reordering buffer */
    @field_list(1) bit<48> clock;        /* egress time of the previous pass (recirculated) */
    /* this pass only */
    bit<1>  sender;
    bit<1>  receiver;
    bit<1>  blocking;
    bit<16> retx_group;
    bit<48> timeout_us;
    bit<32> drop_ppm;
    bit<17> seq;
}

/* a is before b in 17-bit serial arithmetic */
bool before(in bit<17> a, in bit<17> b) {
    bit<17> d = b - a;
    return d != 0 && d < 65536;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t sm) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            TYPE_LG: parse_lg;
            default: accept;
        }
    }
    state parse_lg {
        packet.extract(hdr.lg);
        transition select(hdr.lg.kind, hdr.lg.dummy) {
            (KIND_ACK, _): parse_ack;
            (KIND_DATA, 0): parse_next;
            default: accept;
        }
    }
    state parse_ack {
        packet.extract(hdr.lg_ack);
        transition accept;
    }
    state parse_next {
        packet.extract(hdr.lg_next);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    counter(8, CounterType.packets) lg_stats;
    register<bit<17>>(1) rx_expected;
    register<bit<17>>(1) tx_acked;     /* leading ACK + 1: the first seq not known received */
    register<bit<1>>(4096) tx_holes;
    register<bit<1>>(4096) rx_holes;
    register<bit<17>>(1) rx_ack_no;
    register<bit<48>>(1) rx_stall_since;

    /* The control plane sets this default action: the roles on port 2, LG (blocking = 1) or
     * LG_NB, the multicast group of the N retransmitted copies and the ackNo timeout. */
    action configure(bit<1> sender, bit<1> receiver, bit<1> blocking, bit<16> retx_group,
                     bit<32> timeout_us) {
        meta.sender = sender;
        meta.receiver = receiver;
        meta.blocking = blocking;
        meta.retx_group = retx_group;
        meta.timeout_us = (bit<48>) timeout_us;
    }
    table lg_config {
        actions = { configure; }
        default_action = configure(0, 0, 0, 0, 0);
    }

    /* The corruption emulator: a frame from the link is lost with probability drop_ppm / 1e6
     * before anything else sees it, like a receiving MAC discarding a corrupted frame. */
    action corrupt(bit<32> drop_ppm) {
        meta.drop_ppm = drop_ppm;
    }
    table link_corruption {
        actions = { corrupt; }
        default_action = corrupt(0);
    }

    /* Strip the LG headers and hand the packet to the host. */
    action deliver() {
        hdr.ethernet.ether_type = hdr.lg_next.ether_type;
        hdr.lg.setInvalid();
        hdr.lg_next.setInvalid();
        sm.egress_spec = HOST_PORT;
        lg_stats.count(STAT_DELIVERED);
    }

    action duplicate() {
        mark_to_drop(sm);
        lg_stats.count(STAT_DUPLICATES);
    }

    /* Send an ACK back to the sender: it is built from an I2E clone in egress. */
    action send_ack(bit<17> leading) {
        meta.make_ack = 1;
        meta.ack_leading = leading;
        clone_preserving_field_list(CloneType.I2E, ACK_SESSION, 1);
    }

    /* A gap of `gap` sequence numbers starting at `first`: count it, remember the holes (at
     * most 4 are notified), and notify the sender with the ACK. */
    action loss_detected(bit<17> first, bit<17> gap) {
        lg_stats.count(STAT_LOSS_EVENTS);
        meta.ack_first_lost = first[15:0];
        meta.ack_holes = gap > 4 ? 8w4 : (bit<8>) gap;
    }

    apply {
        lg_config.apply();
        if (sm.ingress_port == LINK_PORT) {
            link_corruption.apply();
            if (meta.drop_ppm != 0) {
                bit<32> draw;
                random(draw, 0, 999999);
                if (draw < meta.drop_ppm) {
                    mark_to_drop(sm);
                    exit;
                }
            }
            lg_stats.count(STAT_RECEIVED);   /* C; recirculated passes have ingress_port 0 */
        }
        if (meta.tx_copy == 1) {
            /* A Tx-buffer copy: wait until the leading ACK passes it; then retransmit it if
             * the receiver reported it lost, else it was delivered: drop it. */
            meta.seq = hdr.lg.era ++ hdr.lg.seq_no;
            if (meta.tx_first == 1) {
                meta.tx_first = 0;
                meta.make_dummy = 1;
                clone_preserving_field_list(CloneType.I2E, DUMMY_SESSION, 1);
            }
            bit<17> acked;
            tx_acked.read(acked, 0);
            if (!before(meta.seq, acked)) {
                sm.egress_spec = LINK_PORT;
                sm.priority = PRIO_LOW;
            } else {
                bit<32> slot = (bit<32>) (meta.seq % HOLE_SLOTS);
                bit<1> hole;
                tx_holes.read(hole, slot);
                if (hole == 1) {
                    tx_holes.write(slot, 0);
                    hdr.lg.retx = 1;
                    meta.tx_copy = 0;
                    sm.mcast_grp = meta.retx_group;
                    sm.priority = PRIO_HIGH;
                    lg_stats.count(STAT_RETX);
                } else {
                    mark_to_drop(sm);
                }
            }
        } else if (sm.ingress_port == LINK_PORT && hdr.lg.isValid() && hdr.lg.kind == KIND_ACK) {
            /* Sender side: an ACK, possibly with a loss notification. */
            mark_to_drop(sm);
            if (hdr.lg_ack.hole_size != 0) {
                lg_stats.count(STAT_NOTIFIED);
            }
            bit<17> first = 1w0 ++ hdr.lg_ack.first_lost;
            if (hdr.lg_ack.hole_size > 0) {
                tx_holes.write((bit<32>) (first % HOLE_SLOTS), 1);
            }
            if (hdr.lg_ack.hole_size > 1) {
                tx_holes.write((bit<32>) ((first + 1) % HOLE_SLOTS), 1);
            }
            if (hdr.lg_ack.hole_size > 2) {
                tx_holes.write((bit<32>) ((first + 2) % HOLE_SLOTS), 1);
            }
            if (hdr.lg_ack.hole_size > 3) {
                tx_holes.write((bit<32>) ((first + 3) % HOLE_SLOTS), 1);
            }
            bit<17> acked = (hdr.lg_ack.era ++ hdr.lg_ack.leading_ack) + 1;
            bit<17> known;
            tx_acked.read(known, 0);
            if (before(known, acked)) {
                tx_acked.write(0, acked);
            }
        } else if ((sm.ingress_port == LINK_PORT || meta.buffered == 1) && hdr.lg.isValid()) {
            /* Receiver side: a data frame, a retransmission or a dummy. */
            meta.seq = hdr.lg.era ++ hdr.lg.seq_no;
            bit<1> fresh = 0;   /* deliverable (not a duplicate, not a dummy) */
            if (meta.buffered == 1) {
                fresh = 1;
            } else if (hdr.lg.retx == 1) {
                bit<1> hole;
                rx_holes.read(hole, (bit<32>) (meta.seq % HOLE_SLOTS));
                if (hole == 1) {
                    rx_holes.write((bit<32>) (meta.seq % HOLE_SLOTS), 0);
                    fresh = 1;
                } else {
                    duplicate();
                }
            } else {
                bit<17> expected;
                rx_expected.read(expected, 0);
                bool ahead = before(expected, meta.seq);
                bit<17> gap = meta.seq - expected;
                /* TODO (exercise 4): a dummy carries the last seq sent: it reveals a loss when that seq is not before the expected one, and the gap then counts the dummy's own seq too. */
                if (meta.seq == expected && hdr.lg.dummy == 0) {
                    rx_expected.write(0, meta.seq + 1);
                    fresh = 1;
                } else if (ahead) {
                    loss_detected(expected, gap);
                    rx_holes.write((bit<32>) (expected % HOLE_SLOTS), 1);
                    if (gap > 1) { rx_holes.write((bit<32>) ((expected + 1) % HOLE_SLOTS), 1); }
                    if (gap > 2) { rx_holes.write((bit<32>) ((expected + 2) % HOLE_SLOTS), 1); }
                    if (gap > 3) { rx_holes.write((bit<32>) ((expected + 3) % HOLE_SLOTS), 1); }
                    rx_expected.write(0, meta.seq + 1);
                    send_ack(meta.seq);
                    fresh = 1;
                } else if (hdr.lg.dummy == 0) {
                    duplicate();
                }
                if (hdr.lg.dummy == 1) {
                    fresh = 0;
                    mark_to_drop(sm);
                }
                if (meta.make_ack == 0 && hdr.lg.dummy == 0) {
                    rx_expected.read(expected, 0);
                    send_ack(expected - 1);   /* every arrival is acknowledged */
                }
            }
            if (fresh == 1) {
                if (meta.blocking == 1) {
                    bit<17> ack_no;
                    rx_ack_no.read(ack_no, 0);
                    bit<48> now = meta.buffered == 1 ? meta.clock : sm.ingress_global_timestamp;
                    if (meta.seq == ack_no) {
                        rx_ack_no.write(0, ack_no + 1);
                        rx_stall_since.write(0, 0);
                        meta.buffered = 0;
                        deliver();
                    } else if (before(ack_no, meta.seq)) {
                        bit<48> since;
                        rx_stall_since.read(since, 0);
                        if (since == 0) {
                            rx_stall_since.write(0, now + 1);
                        } else if (now + 1 - since >= meta.timeout_us) {
                            rx_ack_no.write(0, ack_no + 1);
                            rx_stall_since.write(0, now + 1);
                            lg_stats.count(STAT_TIMEOUTS);
                        }
                        meta.buffered = 1;
                        sm.egress_spec = HOST_PORT;
                    } else {
                        meta.buffered = 0;
                        duplicate();
                    }
                } else {
                    deliver();
                }
            }
        } else if (sm.ingress_port == HOST_PORT) {
            sm.egress_spec = LINK_PORT;
            sm.priority = PRIO_DATA;
        } else {
            sm.egress_spec = HOST_PORT;
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    counter(1, CounterType.packets) lg_sent;
    register<bit<17>>(1) tx_next;

    apply {
        bool on_wire = true;
        if (meta.make_ack == 1 && sm.instance_type == 1) {
            /* Build the ACK / loss notification from the cloned packet. */
            hdr.lg.setValid();
            hdr.lg.kind = KIND_ACK;
            hdr.lg.retx = 0;
            hdr.lg.dummy = 0;
            hdr.lg_ack.setValid();
            hdr.lg_ack.era = meta.ack_leading[16:16];
            hdr.lg_ack.leading_ack = meta.ack_leading[15:0];
            hdr.lg_ack.first_lost = meta.ack_first_lost;
            hdr.lg_ack.hole_size = meta.ack_holes;
            hdr.lg_next.setInvalid();
            hdr.ethernet.ether_type = TYPE_LG;
            truncate(ACK_FRAME_BYTES);
        } else if (meta.make_dummy == 1 && sm.instance_type == 1) {
            /* TODO (exercise 4): turn the clone into the dummy: the LG header with dummy = 1 and the copy's seq, no lg_next, truncated to DUMMY_FRAME_BYTES. */
        } else if (meta.tx_copy == 1) {
            /* A Tx-buffer copy loops: back to ingress, never on the wire. */
            on_wire = false;
            recirculate_preserving_field_list(1);
        } else if (meta.buffered == 1) {
            /* A packet in the reordering buffer loops; its clock is this pass's time. */
            meta.clock = sm.egress_global_timestamp;
            on_wire = false;
            recirculate_preserving_field_list(1);
        } else if (sm.egress_port == LINK_PORT && meta.sender == 1 && !hdr.lg.isValid()) {
            bit<17> seq;
            tx_next.read(seq, 0);
            tx_next.write(0, seq + 1);
            hdr.lg.setValid();
            hdr.lg.kind = KIND_DATA;
            hdr.lg.era = seq[16:16];
            hdr.lg.seq_no = seq[15:0];
            hdr.lg_next.setValid();
            hdr.lg_next.ether_type = hdr.ethernet.ether_type;
            hdr.ethernet.ether_type = TYPE_LG;
            meta.tx_copy = 1;
            meta.tx_first = 1;
            clone_preserving_field_list(CloneType.E2E, TX_SESSION, 1);
        }
        if (sm.egress_port == LINK_PORT && on_wire) {
            lg_sent.count(0);
        }
    }
}

control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.lg);
        packet.emit(hdr.lg_ack);
        packet.emit(hdr.lg_next);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
