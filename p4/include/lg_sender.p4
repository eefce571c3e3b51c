/* LG sender role: sequence numbers, the Tx buffer of recirculating copies (App. A.2),
 * N-copy retransmission, the dummy, and the order-preserving hold that implements pause. */
#ifndef LG_SENDER_P4
#define LG_SENDER_P4

register<bit<17>>(LG_PORTS) lg_tx_next;        /* next (era, seq_no) to assign */
register<bit<17>>(LG_PORTS) lg_tx_leading_ack; /* receiver's latest seq, as last reported */
register<bit<1>>(LG_PORTS)  lg_tx_paused;      /* receiver asked us to pause */
register<bit<48>>(LG_PORTS) lg_tx_paused_at;   /* when the pause was last set or refreshed, us */
register<bit<32>>(LG_PORTS) lg_tx_hold_head;   /* next hold ticket to release */
register<bit<32>>(LG_PORTS) lg_tx_hold_tail;   /* next hold ticket to hand out */
register<bit<48>>(LG_PORTS) lg_tx_hold_at;     /* when the hold last moved or was paused, us */
register<bit<8>>(LG_PORTS)  lg_dummy_budget;   /* dummies still allowed (notify count) */
register<bit<1>>(LG_PORTS)  lg_dummy_parked;   /* 1: no dummy exists right now */
register<bit<8>>(LG_PORTS)  lg_dummy_gen;      /* generation of the live dummy */
register<bit<32>>(LG_HOLE_WORDS) lg_tx_holes;  /* reTxReqs: holes the receiver reported */

/* A new sender epoch (config.p4): sequence numbers from 0, nothing acknowledged, no pause, no
 * holds, empty Tx buffer; the live dummy dies (new generation) and the next packet revives one. */
control LgTxReset(in bit<32> pidx) {
    apply {
        lg_tx_next.write(pidx, 0);
        lg_tx_leading_ack.write(pidx, 17w0x1FFFF);
        lg_tx_paused.write(pidx, 0);
        lg_tx_paused_at.write(pidx, 0);
        lg_tx_hold_head.write(pidx, 0);
        lg_tx_hold_tail.write(pidx, 0);
        lg_tx_hold_at.write(pidx, 0);
        lg_tx_buf_bytes.write(pidx, 0);
        lg_tx_buf_pkts.write(pidx, 0);
        lg_tx_buf_max_bytes.write(pidx, 0);
        lg_tx_buf_max_pkts.write(pidx, 0);
        lg_dummy_budget.write(pidx, 0);
        lg_dummy_parked.write(pidx, 1);
        bit<8> gen;
        lg_dummy_gen.read(gen, pidx);
        lg_dummy_gen.write(pidx, gen + 1);
    }
}

/* ACKs, loss notifications and pause/resume arriving on a port whose sender role is on. */
control LgTxFeedback(inout headers_t hdr, inout metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    apply {
        bit<9> port = standard_metadata.ingress_port;
        bit<32> pidx = (bit<32>)port;
        bit<1> on = meta.pc.tx_on;
        if (on == 0) { return; }
        if (hdr.lg_ack.isValid()) {
            if (hdr.lg_loss.isValid()) {
                /* Mark the holes first: one pass updates reTxReqs and the leading ack. */
                bit<16> first = hdr.lg_loss.first_lost;
                bit<8> h = hdr.lg_loss.hole_size;
                if (h > LG_MAX_HOLES_CAP) { h = LG_MAX_HOLES_CAP; }
                bit<64> mask = ((64w1 << h) - 1) << first[4:0];
                bit<32> w0 = lg_hole_word(port, first[11:5]);
                bit<32> w1 = lg_hole_word(port, first[11:5] + 1);
                bit<32> word;
                lg_tx_holes.read(word, w0);
                lg_tx_holes.write(w0, word | mask[31:0]);
                lg_tx_holes.read(word, w1);
                lg_tx_holes.write(w1, word | mask[63:32]);
            }
            bit<17> reported = hdr.lg_ack.era ++ hdr.lg_ack.leading_ack;
            bit<17> leading;
            lg_tx_leading_ack.read(leading, pidx);
            if (lg_seq_lt(leading, reported)) { lg_tx_leading_ack.write(pidx, reported); }
            lg_tx_paused.write(pidx, hdr.lg_ack.xoff);
            if (hdr.lg_ack.xoff == 1) { lg_tx_paused_at.write(pidx, meta.l.now); }
        }
        if (hdr.lg_ctrl.isValid()) {
            lg_tx_paused.write(pidx, hdr.lg_ctrl.pause);
            if (hdr.lg_ctrl.pause == 1) { lg_tx_paused_at.write(pidx, meta.l.now); }
        }
    }
}

/* One loop of a buffered copy (Fig. 16): keep, retransmit N copies, or drop. */
control LgTxCopy(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    LgTxBufRemove() buf_remove;

    apply {
        bit<9> port = meta.lg.port;
        bit<32> pidx = (bit<32>)port;
        bit<1> on = meta.pc.tx_on;
        bit<17> seq = hdr.lg_data.era ++ hdr.lg_data.seq_no;
        bit<17> leading;
        lg_tx_leading_ack.read(leading, pidx);
        if (on == 1 && meta.lg.first_pass == 1) {
            bit<1> parked;
            lg_dummy_parked.read(parked, pidx);
            if (parked == 1) {
                /* Revive the dummy: an I2E clone into the port's courier queue. */
                lg_dummy_parked.write(pidx, 0);
                lg_dummy_gen.read(meta.lg.gen, pidx);
                meta.l.do_clone = 1;
                meta.l.clone_session = meta.pc.port_session;
                meta.lg.clone_kind = KIND_DUMMY;
            }
        }
        meta.lg.first_pass = 0;
        if (on == 0) {
            meta.l.drop = 1;
        } else if (lg_seq_lt(leading, seq)) {
            /* Not yet known to be received: loop again. */
            standard_metadata.egress_spec = meta.g.loop_port;
            standard_metadata.priority = PRIO_COURIER;
        } else {
            bit<32> w = lg_hole_word(port, seq[11:5]);
            bit<32> word;
            lg_tx_holes.read(word, w);
            bit<32> bit_mask = 32w1 << seq[4:0];
            if ((word & bit_mask) != 0) {
                lg_tx_holes.write(w, word & ~bit_mask);
                standard_metadata.mcast_grp = meta.pc.tx_mgid;
                standard_metadata.priority = meta.g.prio_high;
                meta.lg.kind = KIND_RETX;
            } else {
                meta.l.drop = 1;
            }
        }
        if (on == 0 || !lg_seq_lt(leading, seq)) { buf_remove.apply(port, meta.lg.buf_len); }
    }
}

/* Order-preserving hold (our stand-in for the paused normal queue, Alg. 2 at the sender).
 * A pause that no ACK or pause frame refreshed for tx_pause_timeout_us expires (as PFC's pause
 * time does), so a pause the receiver never sent, or a lost resume, cannot hold P forever.
 * The awaited ticket expires the same way: a held packet that finds the link not paused and
 * the hold not moved for tx_pause_timeout_us gives up on the tickets before it (their packets
 * were lost, e.g. dropped by a full recirculation queue): every ticket handed out so far is
 * passed over, so each held packet leaves when it next comes round, in the recirculation
 * queue's (arrival) order, and the hold starts afresh after them. */
control LgTxHold(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    /* A held packet leaves for its port at normal priority. */
    action release(bit<9> port) {
        meta.lg.kind = KIND_NONE;
        standard_metadata.egress_spec = port;
        standard_metadata.priority = meta.g.prio_normal;
    }

    /* Around the recirculation port once more. */
    action hold() {
        standard_metadata.egress_spec = meta.g.recirc_port;
        standard_metadata.priority = PRIO_COURIER;
    }

    apply {
        bool held_pass = meta.lg.kind == KIND_HELD;
        bit<9> port = standard_metadata.egress_spec;
        bit<1> on = meta.oc.tx_on;
        bit<32> pause_timeout = meta.oc.tx_pause_timeout_us;
        if (held_pass) {
            port = meta.lg.port;
            on = meta.pc.tx_on;
            pause_timeout = meta.pc.tx_pause_timeout_us;
        }
        bit<32> pidx = (bit<32>)port;
        if (on == 0) {
            if (held_pass) { release(port); }
            return;
        }
        bit<1> paused;
        bit<32> head;
        bit<32> tail;
        lg_tx_paused.read(paused, pidx);
        if (paused == 1 && pause_timeout != 0) {
            bit<48> since;
            lg_tx_paused_at.read(since, pidx);
            /* (now > since: a recirculated packet's clock may lag a fresh one's.) */
            if (meta.l.now > since && meta.l.now - since >= (bit<48>)pause_timeout) {
                paused = 0;
                lg_tx_paused.write(pidx, 0);
                lg_cnt_pause_expiries.count(pidx);
            }
        }
        lg_tx_hold_head.read(head, pidx);
        lg_tx_hold_tail.read(tail, pidx);
        if (held_pass) {
            /* 0: this packet's turn; top bit set: its turn was passed over. */
            bit<32> ahead = meta.lg.ticket - head;
            if (paused == 1) {
                lg_tx_hold_at.write(pidx, meta.l.now);
                hold();
            } else if (ahead[31:31] == 1) {
                release(port);
            } else {
                bit<48> moved;
                lg_tx_hold_at.read(moved, pidx);
                bool expired = pause_timeout != 0 && meta.l.now > moved
                               && meta.l.now - moved >= (bit<48>)pause_timeout;
                if (ahead == 0) {
                    lg_tx_hold_head.write(pidx, head + 1);
                    lg_tx_hold_at.write(pidx, meta.l.now);
                    release(port);
                } else if (expired) {
                    lg_tx_hold_head.write(pidx, tail);
                    lg_tx_hold_at.write(pidx, meta.l.now);
                    lg_cnt_hold_expiries.count(pidx);
                    release(port);
                } else {
                    hold();
                }
            }
        } else if (paused == 1 || head != tail) {
            if (head == tail) { lg_tx_hold_at.write(pidx, meta.l.now); }
            lg_tx_hold_tail.write(pidx, tail + 1);
            meta.lg.ticket = tail;
            meta.lg.kind = KIND_HELD;
            meta.lg.port = port;
            hold();
        }
    }
}

/* Frames leaving a port whose sender role is on: data gets a seq_no and a Tx copy, the dummy
 * replenishes itself while its budget lasts, retransmitted copies are flagged. */
control LgTxEgress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    apply {
        bit<9> port = standard_metadata.egress_port;
        bit<32> pidx = (bit<32>)port;
        bit<1> on = meta.ec.tx_on;
        lg_kind_t kind = meta.lg.kind;
        if (on == 0) {
            if (kind == KIND_DUMMY) { meta.l.drop = 1; }
            return;
        }
        bit<1> blocking = meta.ec.tx_blocking;
        if (kind == KIND_DUMMY) {
            bit<8> gen;
            bit<8> budget;
            lg_dummy_gen.read(gen, pidx);
            lg_dummy_budget.read(budget, pidx);
            if (gen != meta.lg.gen) {
                meta.l.drop = 1;
            } else if (budget == 0) {
                lg_dummy_parked.write(pidx, 1);
                meta.l.drop = 1;
            } else {
                lg_dummy_budget.write(pidx, budget - 1);
                bit<17> next_seq;
                lg_tx_next.read(next_seq, pidx);
                bit<17> last = next_seq - 1;
                hdr.ethernet.ether_type = ETHERTYPE_LG;
                hdr.lg_data.setValid();
                hdr.lg_data.pkt_type = LG_TYPE_DATA;
                hdr.lg_data.more = 0;
                hdr.lg_data.era = last[16:16];
                hdr.lg_data.retx = 0;
                hdr.lg_data.dummy = 1;
                hdr.lg_data.blocking = blocking;
                hdr.lg_data.rx_buffered = 0;
                hdr.lg_data.seq_no = last[15:0];
                hdr.lg_ack.setInvalid();
                hdr.lg_loss.setInvalid();
                hdr.lg_ctrl.setInvalid();
                hdr.lg_next.setInvalid();
                hdr.ipv4.setInvalid();
                meta.l.trunc_len = LG_LEN_DUMMY;
                meta.l.e2e_clone = 1;
                meta.l.e2e_session = meta.ec.port_session;
                meta.lg.clone_kind = KIND_DUMMY;
                lg_cnt_dummies.count(pidx);
            }
        } else if (kind == KIND_RETX) {
            hdr.lg_data.retx = 1;
            hdr.lg_data.rx_buffered = 0;
            hdr.lg_data.more = 0;
            hdr.lg_ack.setInvalid();
            lg_cnt_retx.count(pidx);
        } else if (kind == KIND_NONE && !hdr.lg_data.isValid()) {
            bit<17> seq;
            lg_tx_next.read(seq, pidx);
            lg_tx_next.write(pidx, seq + 1);
            /* This seq_no starts clean in reTxReqs (no stale hole from 4096 seqs ago). */
            bit<32> w = lg_hole_word(port, seq[11:5]);
            bit<32> word;
            lg_tx_holes.read(word, w);
            lg_tx_holes.write(w, word & ~(32w1 << seq[4:0]));
            hdr.lg_next.setValid();
            hdr.lg_next.ether_type = hdr.ethernet.ether_type;
            hdr.ethernet.ether_type = ETHERTYPE_LG;
            hdr.lg_data.setValid();
            hdr.lg_data.pkt_type = LG_TYPE_DATA;
            hdr.lg_data.more = 0;
            hdr.lg_data.era = seq[16:16];
            hdr.lg_data.retx = 0;
            hdr.lg_data.dummy = 0;
            hdr.lg_data.blocking = blocking;
            hdr.lg_data.rx_buffered = 0;
            hdr.lg_data.seq_no = seq[15:0];
            lg_dummy_budget.write(pidx, meta.ec.dummy_repeat);
            /* Tx buffer: an E2E copy (with the header) goes to the recirculation port. */
            meta.lg.port = port;
            meta.lg.buf_len = (bit<16>)standard_metadata.packet_length + LG_DATA_OVERHEAD;
            meta.l.e2e_clone = 1;
            meta.l.e2e_session = meta.g.recirc_session;
            meta.lg.clone_kind = KIND_TXCOPY;
        }
    }
}

#endif
