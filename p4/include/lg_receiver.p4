/* LG receiver role: loss detection, notifications, Alg. 1 reordering + de-dup with
 * ackNoTimeout, Alg. 2 backpressure, and the ACKs (piggybacked and explicit) it sends back. */
#ifndef LG_RECEIVER_P4
#define LG_RECEIVER_P4

register<bit<17>>(LG_PORTS) lg_rx_expected;     /* next fresh seq expected (leading ack + 1) */
register<bit<17>>(LG_PORTS) lg_rx_ack_no;       /* LG mode: next seq to deliver (Alg. 1) */
register<bit<48>>(LG_PORTS) lg_rx_stall_since;  /* 1 + time ack_no got blocked, 0 = not */
register<bit<1>>(LG_PORTS)  lg_rx_paused;       /* Alg. 2 curr_pfc_state: 1 = pause sent */
register<bit<8>>(LG_PORTS)  lg_ack_budget;      /* explicit ACKs still to send */
register<bit<1>>(LG_PORTS)  lg_ack_parked;      /* 1: no explicit ACK exists right now */
register<bit<8>>(LG_PORTS)  lg_ack_gen;         /* generation of the live explicit ACK */
register<bit<32>>(LG_HOLE_WORDS) lg_rx_holes;   /* notified holes awaiting a retransmission */
register<bit<8>>(LG_PORTS)  lg_rx_notify_pending; /* notifications detected, not yet sent */
register<bit<17>>(LG_PORTS) lg_rx_safe_ack;    /* leading ACK to advertise while one is pending */

/* A new receiver epoch (config.p4): nothing seen or pending, not paused, empty reordering
 * buffer; the live explicit ACK dies (new generation) and the next update revives one. */
control LgRxReset(in bit<32> pidx) {
    apply {
        lg_rx_expected.write(pidx, 0);
        lg_rx_ack_no.write(pidx, 0);
        lg_rx_stall_since.write(pidx, 0);
        lg_rx_paused.write(pidx, 0);
        lg_rx_buf_bytes.write(pidx, 0);
        lg_rx_buf_pkts.write(pidx, 0);
        lg_rx_buf_max_bytes.write(pidx, 0);
        lg_rx_buf_max_pkts.write(pidx, 0);
        lg_ack_budget.write(pidx, 0);
        lg_rx_notify_pending.write(pidx, 0);
        lg_rx_safe_ack.write(pidx, 0);
        lg_ack_parked.write(pidx, 1);
        bit<8> gen;
        lg_ack_gen.read(gen, pidx);
        lg_ack_gen.write(pidx, gen + 1);
    }
}

/* Fresh frames and reordering-buffer passes that carry an LG data header. */
control LgRxIngress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    LgRxBufAdd() buf_add;
    LgRxBufRemove() buf_remove;

    apply {
        bool fresh = standard_metadata.instance_type != INSTANCE_RECIRC;
        bit<9> port = meta.lg.port;
        bit<32> pidx = (bit<32>)port;
        bit<1> on = meta.pc.rx_on;
        bit<17> seq = hdr.lg_data.era ++ hdr.lg_data.seq_no;
        bit<8> ack_repeat = meta.pc.ack_repeat;
        bool leaves_buffer = !fresh;
        bool ordered = false;

        if (on == 0) {
            /* Receiver role off: a dummy is consumed, anything else is delivered unprotected. */
            if (hdr.lg_data.dummy == 1) { meta.l.drop = 1; } else { meta.l.deliver = 1; }
        } else if (fresh) {
            bit<17> expected;
            lg_rx_expected.read(expected, pidx);
            if (!lg_seq_near(expected, seq)) {
                /* Outside the window no frame of this epoch can be: not ours, state untouched. */
                meta.l.drop = 1;
                lg_cnt_out_of_window.count(pidx);
                return;
            }
            /* Loss detection: an original or a dummy ahead of everything seen so far. */
            bit<17> last = expected - 1;
            bool advanced = false;
            if (hdr.lg_data.retx == 0 && lg_seq_lt(last, seq)) {
                advanced = true;
                bit<17> holes17 = seq - expected;
                if (hdr.lg_data.dummy == 1) { holes17 = seq - last; }
                if (holes17 != 0) {
                    /* Until the notification has left, ACKs must not cover the holes: count it
                     * as pending (before `expected` moves) and freeze the advertised ACK. */
                    bit<8> pending;
                    lg_rx_notify_pending.read(pending, pidx);
                    lg_rx_notify_pending.write(pidx, pending + 1);
                    if (pending == 0) { lg_rx_safe_ack.write(pidx, last); }
                }
                lg_rx_expected.write(pidx, seq + 1);
                if (holes17 != 0) {
                    bit<8> k = meta.pc.rx_max_holes;
                    if (k > LG_MAX_HOLES_CAP) { k = LG_MAX_HOLES_CAP; }
                    if (k == 0) { k = 1; }
                    bit<32> lost;
                    lg_rx_lost.read(lost, pidx);
                    lg_rx_lost.write(pidx, lost + (bit<32>)holes17);
                    bit<8> h = k;
                    if (holes17 < (bit<17>)k) { h = (bit<8>)holes17; }
                    if (holes17 > (bit<17>)k) {
                        bit<32> unrec;
                        lg_rx_unrecoverable.read(unrec, pidx);
                        lg_rx_unrecoverable.write(pidx, unrec + (bit<32>)(holes17 - (bit<17>)k));
                    }
                    /* Remember the notified holes, for LG_NB de-duplication. */
                    bit<64> mask = ((64w1 << h) - 1) << expected[4:0];
                    bit<32> w0 = lg_hole_word(port, expected[11:5]);
                    bit<32> w1 = lg_hole_word(port, expected[11:5] + 1);
                    bit<32> word;
                    lg_rx_holes.read(word, w0);
                    lg_rx_holes.write(w0, word | mask[31:0]);
                    lg_rx_holes.read(word, w1);
                    lg_rx_holes.write(w1, word | mask[63:32]);
                    /* Loss notification: I2E clone, routed at the highest priority. */
                    meta.l.do_clone = 1;
                    meta.l.clone_session = meta.g.recirc_session;
                    meta.lg.clone_kind = KIND_NOTIFY;
                    meta.lg.ack = seq;
                    meta.lg.first_lost = expected[15:0];
                    meta.lg.hole_size = h;
                    lg_cnt_loss_events.count(pidx);
                }
            }
            if (advanced || hdr.lg_data.retx == 1) {
                lg_ack_budget.write(pidx, ack_repeat);
                bit<1> parked;
                lg_ack_parked.read(parked, pidx);
                if (parked == 1 && meta.l.do_clone == 0) {
                    /* Revive the explicit ACK: an I2E clone into this port's courier queue. */
                    lg_ack_parked.write(pidx, 0);
                    lg_ack_gen.read(meta.lg.gen, pidx);
                    meta.l.do_clone = 1;
                    meta.l.clone_session = meta.pc.port_session;
                    meta.lg.clone_kind = KIND_ACK;
                }
            }
        }

        if (on == 0 || hdr.lg_data.dummy == 1) {
            if (on == 1) { meta.l.drop = 1; }
        } else if (hdr.lg_data.blocking == 0) {
            /* LG_NB: deliver at once; a retransmission only if its hole is still open. */
            if (hdr.lg_data.retx == 1) {
                bit<32> w = lg_hole_word(port, seq[11:5]);
                bit<32> word;
                lg_rx_holes.read(word, w);
                bit<32> bit_mask = 32w1 << seq[4:0];
                if ((word & bit_mask) != 0) {
                    lg_rx_holes.write(w, word & ~bit_mask);
                    meta.l.deliver = 1;
                } else {
                    meta.l.drop = 1;
                    lg_cnt_dups.count(pidx);
                }
            } else {
                meta.l.deliver = 1;
                bit<32> buffered;
                lg_rx_buf_pkts.read(buffered, pidx);
                if (buffered == 0) { lg_rx_ack_no.write(pidx, seq + 1); }
            }
        } else {
            /* LG: Alg. 1 (de-duplication and in-order delivery) with the ackNoTimeout. */
            ordered = true;
            bit<17> ack_no;
            bit<48> stall;
            lg_rx_ack_no.read(ack_no, pidx);
            lg_rx_stall_since.read(stall, pidx);
            bit<48> now1 = meta.l.now + 1;
            if (lg_seq_lt(ack_no, seq)) {
                bit<32> timeout = meta.pc.rx_timeout_us;
                if (stall == 0) {
                    stall = now1;
                } else if (timeout != 0 && now1 > stall && now1 - stall >= (bit<48>)timeout) {
                    /* (now1 > stall: a recirculated packet's clock may lag a fresh one's.) */
                    ack_no = ack_no + 1;
                    stall = now1;
                    lg_cnt_timeouts.count(pidx);
                }
            }
            if (seq == ack_no) {
                meta.l.deliver = 1;
                ack_no = ack_no + 1;
                stall = 0;
            } else if (lg_seq_lt(ack_no, seq)) {
                leaves_buffer = false;
                if (fresh) {
                    meta.lg.buf_len = (bit<16>)standard_metadata.packet_length;
                    buf_add.apply(port, meta.lg.buf_len);
                }
                hdr.lg_data.rx_buffered = 1;
                meta.lg.kind = KIND_RXBUF;
                standard_metadata.egress_spec = meta.g.recirc_port;
                standard_metadata.priority = PRIO_COURIER;
            } else {
                meta.l.drop = 1;
                lg_cnt_dups.count(pidx);
            }
            lg_rx_ack_no.write(pidx, ack_no);
            lg_rx_stall_since.write(pidx, stall);
        }

        if (leaves_buffer) { buf_remove.apply(port, meta.lg.buf_len); }

        /* Alg. 2: pause / resume on the reordering-buffer occupancy. */
        if (ordered && meta.l.do_clone == 0) {
            bit<32> bytes;
            bit<1> paused;
            bit<32> pause_at = meta.pc.rx_pause_bytes;
            bit<32> resume_at = meta.pc.rx_resume_bytes;
            lg_rx_buf_bytes.read(bytes, pidx);
            lg_rx_paused.read(paused, pidx);
            if (paused == 0 && pause_at != 0 && bytes >= pause_at) {
                lg_rx_paused.write(pidx, 1);
                meta.l.do_clone = 1;
                meta.l.clone_session = meta.g.recirc_session;
                meta.lg.clone_kind = KIND_PAUSE;
                lg_cnt_pauses.count(pidx);
            } else if (paused == 1 && bytes <= resume_at) {
                lg_rx_paused.write(pidx, 0);
                meta.l.do_clone = 1;
                meta.l.clone_session = meta.g.recirc_session;
                meta.lg.clone_kind = KIND_RESUME;
                lg_ack_budget.write(pidx, ack_repeat);
                lg_cnt_resumes.count(pidx);
            }
        }
    }
}

/* Everything leaving a port whose receiver role is on carries the receiver's ACK state. */
control LgRxEgress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    apply {
        bit<32> pidx = (bit<32>)standard_metadata.egress_port;
        bit<1> on = meta.ec.rx_on;
        lg_kind_t kind = meta.lg.kind;
        bool control_frame = kind == KIND_ACK || kind == KIND_NOTIFY || kind == KIND_PAUSE
                             || kind == KIND_RESUME;
        if (on == 0) {
            if (control_frame) { meta.l.drop = 1; }
            return;
        }
        bit<17> expected;
        bit<1> paused;
        bit<8> pending;
        lg_rx_expected.read(expected, pidx);
        lg_rx_notify_pending.read(pending, pidx);
        lg_rx_paused.read(paused, pidx);
        bit<17> leading = expected - 1;
        if (kind == KIND_NOTIFY) {
            leading = meta.lg.ack;
            /* Read and write in one action: atomic on BMv2, whose ingress thread may count a
             * new notification meanwhile (a lost count would unfreeze the ACK too early). */
            lg_rx_notify_pending.read(pending, pidx);
            lg_rx_notify_pending.write(pidx, pending |-| 1);
        } else if (pending > 0) {
            lg_rx_safe_ack.read(leading, pidx);
        }

        if (control_frame) {
            /* Build a control frame from the cloned packet: Ethernet + LG headers only. */
            bit<48> src = hdr.ethernet.src_addr;
            hdr.ethernet.src_addr = hdr.ethernet.dst_addr;
            hdr.ethernet.dst_addr = src;
            hdr.ethernet.ether_type = ETHERTYPE_LG;
            hdr.lg_data.setInvalid();
            hdr.lg_ack.setInvalid();
            hdr.lg_loss.setInvalid();
            hdr.lg_ctrl.setInvalid();
            hdr.lg_next.setInvalid();
            hdr.ipv4.setInvalid();
        }

        if (kind == KIND_ACK) {
            bit<8> gen;
            bit<8> budget;
            lg_ack_gen.read(gen, pidx);
            lg_ack_budget.read(budget, pidx);  /* read-modify-write in one action (atomic) */
            lg_ack_budget.write(pidx, budget |-| (bit<8>)(bit<1>)(gen == meta.lg.gen));
            if (gen != meta.lg.gen) {
                meta.l.drop = 1;
            } else if (budget == 0) {
                lg_ack_parked.write(pidx, 1);
                meta.l.drop = 1;
            } else {
                hdr.lg_ack.setValid();
                hdr.lg_ack.pkt_type = LG_TYPE_ACK;
                hdr.lg_ack.piggybacked = 0;
                hdr.lg_ack.era = leading[16:16];
                hdr.lg_ack.xoff = paused;
                hdr.lg_ack.pad = 0;
                hdr.lg_ack.leading_ack = leading[15:0];
                meta.l.trunc_len = LG_LEN_ACK;
                meta.l.e2e_clone = 1;
                meta.l.e2e_session = meta.ec.port_session;
                meta.lg.clone_kind = KIND_ACK;
                lg_cnt_acks.count(pidx);
            }
        } else if (kind == KIND_NOTIFY) {
            hdr.lg_ack.setValid();
            hdr.lg_ack.pkt_type = LG_TYPE_ACK_LOSS;
            hdr.lg_ack.piggybacked = 0;
            hdr.lg_ack.era = leading[16:16];
            hdr.lg_ack.xoff = paused;
            hdr.lg_ack.pad = 0;
            hdr.lg_ack.leading_ack = leading[15:0];
            hdr.lg_loss.setValid();
            hdr.lg_loss.hole_size = meta.lg.hole_size;
            hdr.lg_loss.first_lost = meta.lg.first_lost;
            meta.l.trunc_len = LG_LEN_NOTIFY;
        } else if (kind == KIND_PAUSE || kind == KIND_RESUME) {
            bit<32> bytes;
            lg_rx_buf_bytes.read(bytes, pidx);
            hdr.lg_ctrl.setValid();
            hdr.lg_ctrl.pkt_type = LG_TYPE_CTRL;
            hdr.lg_ctrl.pause = 0;
            if (kind == KIND_PAUSE) { hdr.lg_ctrl.pause = 1; }
            hdr.lg_ctrl.pad = 0;
            hdr.lg_ctrl.rx_buffer_kb = bytes[25:10];
            meta.l.trunc_len = LG_LEN_CTRL;
        } else if (meta.l.drop == 0) {
            /* Piggyback on whatever else leaves: data, retransmissions, dummies. */
            bit<1> payload = 1;
            if (hdr.lg_data.isValid()) {
                hdr.lg_data.more = 1;
                if (hdr.lg_data.dummy == 1) {
                    payload = 0;
                    meta.l.trunc_len = meta.l.trunc_len + 3;
                }
            } else {
                hdr.lg_next.setValid();
                hdr.lg_next.ether_type = hdr.ethernet.ether_type;
                hdr.ethernet.ether_type = ETHERTYPE_LG;
            }
            hdr.lg_ack.setValid();
            hdr.lg_ack.pkt_type = LG_TYPE_ACK;
            hdr.lg_ack.piggybacked = payload;
            hdr.lg_ack.era = leading[16:16];
            hdr.lg_ack.xoff = paused;
            hdr.lg_ack.pad = 0;
            hdr.lg_ack.leading_ack = leading[15:0];
            bit<8> budget;
            lg_ack_budget.read(budget, pidx);
            lg_ack_budget.write(pidx, budget |-| 1);
        }
    }
}

#endif
