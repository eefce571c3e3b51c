/* TNA LG receiver: loss detection and notifications, LG_NB de-duplication, Alg. 1 reordering
 * with the ackNoTimeout (ingress), PFC backpressure, and the ACKs it advertises (egress). */
#ifndef LGT_RECEIVER_P4
#define LGT_RECEIVER_P4

const bit<8> ORDER_DUP = 0;
const bit<8> ORDER_DELIVER = 1;
const bit<8> ORDER_BUFFER = 2;

control LgRxIngress(inout headers_t hdr, inout ig_meta_t meta,
                    inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                    inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    /* Next fresh seq32 expected: moves to seq + 1 when seq is at or ahead of it, within the
     * window. Returns the gap, seq - expected (serial: below SEQ_WINDOW when seq is at or
     * ahead within the window). */
    Register<bit<32>, bit<9>>(LG_PORTS, 0) expected;
    RegisterAction<bit<32>, bit<9>, bit<32>>(expected) advance = {
        void apply(inout bit<32> v, out bit<32> rv) {
            rv = meta.seq - v;
            if (meta.seq - v < SEQ_WINDOW) { v = meta.seq + SEQ_STEP; }
        }
    };
    /* LG_NB: the window tag (1 ++ seq17[16:LG_SEEN_BITS]) of the last retransmission
     * delivered for each seq: the first of the N copies passes, the rest are duplicates. */
    Register<bit<8>, seen_idx_t>(1 << (8 + LG_SEEN_BITS), 0) rx_retx_seen;
    RegisterAction<bit<8>, seen_idx_t, bit<8>>(rx_retx_seen) first_copy = {
        void apply(inout bit<8> v, out bit<8> rv) {
            rv = 0;
            if (v != meta.tag) {
                v = meta.tag;
                rv = 1;
            }
        }
    };
    /* LG: Alg. 1's ackNo, the next seq32 to deliver. */
    Register<bit<32>, bit<9>>(LG_PORTS, 0) ack_no;
    RegisterAction<bit<32>, bit<9>, bit<8>>(ack_no) order = {
        void apply(inout bit<32> v, out bit<8> rv) {
            if (v == meta.seq) {
                v = v + SEQ_STEP;
                rv = ORDER_DELIVER;
            } else if (meta.seq - v < 32w0x80000000) {
                rv = ORDER_BUFFER;
            } else {
                rv = ORDER_DUP;
            }
        }
    };
    RegisterAction<bit<32>, bit<9>, bit<8>>(ack_no) order_skip = {
        void apply(inout bit<32> v, out bit<8> rv) {
            if (meta.seq - v < 32w0x80000000) { v = v + SEQ_STEP; }
            rv = ORDER_BUFFER;
        }
    };
    /* The time (1.024 us units) ackNo was first found blocked; 0 = not blocked. Returns the
     * value before the pass (the stall start, or 0 when this pass starts it). */
    Register<bit<32>, bit<9>>(LG_PORTS, 0) stall_since;
    RegisterAction<bit<32>, bit<9>, bit<32>>(stall_since) unstall = {
        void apply(inout bit<32> v) { v = 0; }
    };
    RegisterAction<bit<32>, bit<9>, bit<32>>(stall_since) stall = {
        void apply(inout bit<32> v, out bit<32> rv) {
            rv = v;
            if (v == 0) { v = meta.now; }
        }
    };
    /* Reordering-buffer occupancy in bytes, after this pass's change. */
    Register<bit<32>, bit<9>>(LG_PORTS, 0) rx_buf_bytes;
    RegisterAction<bit<32>, bit<9>, bit<32>>(rx_buf_bytes) buf_grow = {
        void apply(inout bit<32> v, out bit<32> rv) {
            v = v + (bit<32>)meta.rx_len;
            rv = v;
        }
    };
    RegisterAction<bit<32>, bit<9>, bit<32>>(rx_buf_bytes) buf_shrink = {
        void apply(inout bit<32> v, out bit<32> rv) {
            v = v - (bit<32>)meta.in_buf_len;
            rv = v;
        }
    };
    RegisterAction<bit<32>, bit<9>, bit<32>>(rx_buf_bytes) buf_read = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; }
    };
    /* Ingress has no packet length on Tofino: the IPv4 length (+ Ethernet and LG) stands in. */
    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) ip_len;
    /* Alg. 2: 1 while a PFC pause is in force. Returns the PFC frame to send (1 pause,
     * 2 resume) when the state changes, else 0. */
    Register<bit<8>, bit<9>>(LG_PORTS, 0) paused;
    RegisterAction<bit<8>, bit<9>, bit<8>>(paused) set_paused = {
        void apply(inout bit<8> v, out bit<8> rv) {
            rv = 0;
            if (v == 0) { rv = 1; }
            v = 1;
        }
    };
    RegisterAction<bit<8>, bit<9>, bit<8>>(paused) clear_paused = {
        void apply(inout bit<8> v, out bit<8> rv) {
            rv = 0;
            if (v == 1) { rv = 2; }
            v = 0;
        }
    };
    Hash<seen_idx_t>(HashAlgorithm_t.IDENTITY) seen_at;
    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) gap_seqs;
    Counter<bit<32>, bit<9>>(LG_PORTS, CounterType_t.PACKETS) loss_events;
    Counter<bit<32>, bit<9>>(LG_PORTS, CounterType_t.PACKETS) dups;
    Counter<bit<32>, bit<9>>(LG_PORTS, CounterType_t.PACKETS) timeouts;
    Counter<bit<32>, bit<9>>(LG_PORTS, CounterType_t.PACKETS) out_of_window;

    /* A PFC frame through the port's PFC session (port_session < PFC_SESSION_OFFSET, so the OR
     * is the sum: in MirrorId_t's width, which keeps Tofino 2 within its stages). */
    action mirror_pfc(lg_kind_t kind) {
        meta.mirror.setValid();
        meta.mirror.kind = kind;
        meta.mirror.port = (bit<16>)meta.port;
        meta.session = (MirrorId_t)meta.pc.port_session | (MirrorId_t)PFC_SESSION_OFFSET;
        ig_dprsr_md.mirror_type = 1;
    }

    action mirror_to(lg_kind_t kind, bit<32> session) {
        meta.mirror.setValid();
        meta.mirror.kind = kind;
        meta.mirror.port = (bit<16>)meta.port;
        meta.session = (MirrorId_t)session;
        ig_dprsr_md.mirror_type = 1;
    }

    /* Buffer bytes against the pause and resume thresholds, and the stall against the
     * ackNoTimeout, by subtraction in an action (a Tofino gateway compares a field with a
     * constant, not two fields); bytes < 2^31. */
    bit<32> bytes;
    bit<32> over;
    bit<32> under;
    bit<32> since;
    bit<32> waited;

    action thresholds() {
        over = bytes - meta.pc.rx_pause_bytes;
        under = meta.pc.rx_resume_bytes - bytes;
        waited = meta.ref - since;  /* now - rx_timeout_us - stall start */
    }

    table lg_thresholds {
        actions = { thresholds; }
        default_action = thresholds();
        size = 1;
    }

    bit<32> gap;
    bit<16> gap16;
    bit<16> holes;
    bit<16> iplen;

    action count_gap() { gap16 = gap_seqs.get({gap[30:15]}); }

    table gap_size {
        actions = { count_gap; }
        default_action = count_gap();
        size = 1;
    }

    /* Stage by stage: the keys, the register accesses (all in parallel), the verdicts, the
     * comparisons, then the notification and PFC mirrors. */
    apply {
        bit<9> port = meta.port;
        seen_idx_t idx = seen_at.get({port[7:0], hdr.lg_data.seq_no[LG_SEEN_BITS - 1:0]});
        meta.tag = (bit<8>)(1w1 ++ hdr.lg_data.era ++ hdr.lg_data.seq_no[15:LG_SEEN_BITS]);
        iplen = ip_len.get({hdr.ipv4.total_len});
        meta.ref = meta.now - meta.pc.rx_timeout_us;
        meta.rx_len = iplen + 19;
        /* K = min(rx_max_holes, LG_MAX_HOLES_TNA), at least one. */
        if (meta.pc.rx_max_holes > LG_MAX_HOLES_TNA) {
            meta.kcap = LG_MAX_HOLES_TNA;
        } else if (meta.pc.rx_max_holes == 0) {
            meta.kcap = 1;
        } else {
            meta.kcap = meta.pc.rx_max_holes;
        }
        meta.pfc = 0;

        /* Conditions on header fields in each gateway (flags computed in a stage of their own
         * would lengthen the chain). fresh: an original or dummy seen for the first time; LG:
         * blocking, not a dummy (Alg. 1). */
        if (meta.looped == 0 && hdr.lg_data.retx == 0) { gap = advance.execute(port); }
        if (hdr.lg_data.dummy == 0 && hdr.lg_data.blocking == 1) {
            if (meta.in_skip == 1) {
                meta.verdict = order_skip.execute(port);
            } else {
                meta.verdict = order.execute(port);
            }
        } else if (hdr.lg_data.dummy == 0 && hdr.lg_data.retx == 1) {
            meta.fresh = first_copy.execute(idx);
        }

        /* Loss detection: lost seqs are the gap, or the gap + 1 after a dummy (it carries the
         * last seq sent). An original or dummy at or ahead of `expected` advances the ACK. */
        if (meta.looped == 0 && hdr.lg_data.retx == 0 && gap[31:27] == 0) {
            hdr.carry.rx_update = 1;
            hdr.carry.ack = meta.seq;
            hdr.carry.ack_repeat = meta.pc.ack_repeat;
        }
        gap_size.apply();
        if (hdr.lg_data.dummy == 1) { holes = gap16 + 1; } else { holes = gap16; }

        if (hdr.lg_data.dummy == 1) {
            meta.drop = 1;
        } else if (meta.looped == 0 && hdr.lg_data.retx == 0 && gap[31:27] != 0
                   && gap[31:27] != 31) {
            /* Outside the window no frame of this epoch can be: not ours, dropped. */
            meta.drop = 1;
            out_of_window.count(port);
            bytes = buf_read.execute(port);
        } else if (hdr.lg_data.blocking == 0) {
            /* LG_NB: deliver at once; a retransmission only if its hole is still open. */
            if (hdr.lg_data.retx == 1 && meta.fresh == 0) {
                meta.drop = 1;
            } else {
                meta.deliver = 1;
            }
        } else if (meta.verdict == ORDER_BUFFER) {
            /* The reordering buffer: loop until ackNo reaches it (or the timeout skips). */
            if (meta.looped == 0) {
                bytes = buf_grow.execute(port);
            } else {
                bytes = buf_read.execute(port);
            }
            if (meta.in_skip == 0 && meta.pc.rx_timeout_us != 0) {
                since = stall.execute(port);
            } else {
                unstall.execute(port);
            }
            hdr.lg_data.rx_buffered = 1;
            hdr.carry.kind = KIND_RXBUF;
            if (meta.g.loop_port == 0) {
                ig_tm_md.ucast_egress_port = meta.g.recirc_port;
            } else {
                ig_tm_md.ucast_egress_port = meta.g.loop_port;
            }
            ig_tm_md.qid = 0;
        } else {
            unstall.execute(port);
            if (meta.looped == 1) {
                bytes = buf_shrink.execute(port);
            } else {
                bytes = buf_read.execute(port);
            }
            if (meta.verdict == ORDER_DELIVER) {
                meta.deliver = 1;
            } else {
                meta.drop = 1;
            }
        }
        if (hdr.lg_data.dummy == 0 && ((hdr.lg_data.blocking == 0 && hdr.lg_data.retx == 1
                                        && meta.fresh == 0)
                                       || (hdr.lg_data.blocking == 1
                                           && meta.verdict == ORDER_DUP))) {
            dups.count(port);
        }
        if (hdr.lg_data.dummy == 0 && hdr.lg_data.blocking == 1 && meta.in_skip == 1) {
            timeouts.count(port);
        }
        /* The bytes a buffered frame accounts, for its removal (a table of its own: in the
         * action of buf_grow, bf-p4c cannot give a keyless table both hash and action data). */
        if (hdr.lg_data.dummy == 0 && hdr.lg_data.blocking == 1 && meta.verdict == ORDER_BUFFER
            && meta.looped == 0) {
            hdr.carry.buf_len = meta.rx_len;
        }

        lg_thresholds.apply();
        /* ackNoTimeout: a buffered pass that finds ackNo stalled for rx_timeout_us makes the
         * next loop of this packet skip the missing seq. */
        if (hdr.lg_data.dummy == 0 && hdr.lg_data.blocking == 1
            && meta.verdict == ORDER_BUFFER) {
            if (meta.in_skip == 0 && meta.pc.rx_timeout_us != 0 && since != 0
                && waited[31:31] == 0) {
                hdr.carry.skip = 1;
            } else {
                hdr.carry.skip = 0;
            }
        }

        if (meta.looped == 0 && hdr.lg_data.retx == 0 && gap[31:27] == 0 && holes != 0) {
            /* A notification of at most K holes: min(kcap, holes) by constant comparisons. */
            mirror_to(KIND_NOTIFY, meta.pc.port_session);
            meta.mirror.ack = meta.seq;
            meta.mirror.first_lost = hdr.lg_data.seq_no - gap16;
            hdr.carry.rx_update = 0;
            loss_events.count(port);
            if (holes == 1) {
                meta.mirror.hole_size = 1;
            } else if (holes == 2 && meta.kcap > 2) {
                meta.mirror.hole_size = 2;
            } else if (holes == 3 && meta.kcap > 3) {
                meta.mirror.hole_size = 3;
            } else {
                meta.mirror.hole_size = meta.kcap;
            }
        } else if (hdr.lg_data.dummy == 0 && hdr.lg_data.blocking == 1) {
            /* Alg. 2: PFC pause above pauseThreshold, resume at or below resumeThreshold (a
             * pass that notifies has its mirror already). */
            if (meta.pc.rx_pause_bytes != 0 && over[31:31] == 0) {
                meta.pfc = set_paused.execute(port);
            } else if (under[31:31] == 0) {
                meta.pfc = clear_paused.execute(port);
            }
        }
        if (meta.pfc == 1) {
            mirror_pfc(KIND_PAUSE);
        } else if (meta.pfc == 2) {
            mirror_pfc(KIND_RESUME);
        }
    }
}

/* Frames leaving a port whose receiver role is on carry its ACK state; notifications and PFC
 * frames are built from their mirrored copies; explicit ACKs from timer packets. */
control LgRxEgress(inout headers_t hdr, inout eg_meta_t meta,
                   in egress_intrinsic_metadata_t eg_intr_md) {
    /* The advertised leading ACK (seq32) of each port's receiver, written by the passes of
     * its fresh data frames and its notifications, read by whatever leaves that port. */
    Register<bit<32>, bit<9>>(LG_PORTS, 32w0xFFFF8000) leading;
    RegisterAction<bit<32>, bit<9>, bit<32>>(leading) set_leading = {
        void apply(inout bit<32> v) { v = hdr.carry.ack; }
    };
    RegisterAction<bit<32>, bit<9>, bit<32>>(leading) get_leading = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; }
    };
    /* Explicit ACKs still allowed since the last update: an update refills it, an explicit ACK
     * spends one (returning the budget before). One RegisterAction for both: with two, one
     * reading hdr.carry.ack_repeat, bf-p4c 9.13.4 for Tofino 2 stops with an internal error on
     * the other (docs/tofino.md, Tofino 2). */
    Register<bit<8>, bit<9>>(LG_PORTS, 0) ack_budget;
    RegisterAction<bit<8>, bit<9>, bit<8>>(ack_budget) ack_budget_update = {
        void apply(inout bit<8> v, out bit<8> rv) {
            rv = v;
            if (hdr.carry.rx_update == 1) {
                v = hdr.carry.ack_repeat;
            } else if (v != 0) {
                v = v - 1;
            }
        }
    };

    /* The lg_ack_h being built: its first byte whole from action data, looked up on the bits
     * that vary (a PHV container is written from one source); seq_no via the hash unit. */
    bit<32> s;          /* the leading ACK (seq32) to advertise */
    bit<8> budget;
    bit<1> emit;
    bit<1> ctl;         /* a control frame: the LG shim and IPv4 go */

    lg_type_t t;
    bit<1> piggy;

    action set_ack_first(lg_type_t pkt_type, bit<1> piggybacked, bit<1> era) {
        hdr.lg_ack.pkt_type = pkt_type;
        hdr.lg_ack.piggybacked = piggybacked;
        hdr.lg_ack.era = era;
        hdr.lg_ack.xoff = 0;
        hdr.lg_ack.pad = 0;
    }

    table ack_first {
        key = { t: exact; piggy: exact; s[31:31]: exact; }
        actions = { set_ack_first; }
        const entries = {
            (LG_TYPE_ACK, 0, 0): set_ack_first(LG_TYPE_ACK, 0, 0);
            (LG_TYPE_ACK, 0, 1): set_ack_first(LG_TYPE_ACK, 0, 1);
            (LG_TYPE_ACK, 1, 0): set_ack_first(LG_TYPE_ACK, 1, 0);
            (LG_TYPE_ACK, 1, 1): set_ack_first(LG_TYPE_ACK, 1, 1);
            (LG_TYPE_ACK_LOSS, 0, 0): set_ack_first(LG_TYPE_ACK_LOSS, 0, 0);
            (LG_TYPE_ACK_LOSS, 0, 1): set_ack_first(LG_TYPE_ACK_LOSS, 0, 1);
        }
        size = 8;
    }
    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) seq_bits;

    /* The PFC class-enable vector of the normal priority (one bit per priority). */
    action set_class(bit<16> vector) { hdr.pfc.class_enable = vector; }

    table pfc_class {
        key = { meta.g.prio_normal: exact; }
        actions = { set_class; }
        const entries = {
            0: set_class(0x01); 1: set_class(0x02); 2: set_class(0x04); 3: set_class(0x08);
            4: set_class(0x10); 5: set_class(0x20); 6: set_class(0x40); 7: set_class(0x80);
        }
        size = 8;
    }

    /* A control frame: an LG ACK or notification, or a PFC frame. (Constants of 16 bits and more
     * in table actions: Tofino 2 cannot take them as immediates beside a stateful ALU.) */
    action control_frame() {
        bit<48> sender = hdr.ethernet.src_addr;  /* back to the sender: addresses swapped */
        hdr.ethernet.src_addr = hdr.ethernet.dst_addr;
        hdr.ethernet.dst_addr = sender;
        hdr.ethernet.ether_type = ETHERTYPE_LG;
        hdr.lg_data.setInvalid();
        hdr.lg_ack.setInvalid();
        hdr.lg_loss.setInvalid();
        hdr.lg_ctrl.setInvalid();
        hdr.lg_next.setInvalid();
        hdr.ipv4.setInvalid();
    }

    /* Header validity set in a table action, not a gateway branch (Tofino PHV allocation). */
    /* The 14 bytes kept of a PFC frame's mirrored pass are not always its Ethernet header (a
     * reordering-buffer pass starts with lg_carry_h): both addresses are set. The source is 0:
     * the port's own MAC is not known here, and the peer's MAC does not read it. */
    action pfc_frame() {
        control_frame();
        hdr.ethernet.dst_addr = 0x0180C2000001;
        hdr.ethernet.src_addr = 0;
        hdr.ethernet.ether_type = ETHERTYPE_PFC;
    }

    table lg_control_frame {
        key = { hdr.carry.kind: exact; }
        actions = { control_frame; pfc_frame; }
        const entries = {
            KIND_PAUSE: pfc_frame();
            KIND_RESUME: pfc_frame();
        }
        size = 4;
        default_action = control_frame();
    }

    /* Piggybacking on a frame without the LG shim: lg_next goes in. */
    action add_next() {
        hdr.lg_next.setValid();
        hdr.lg_next.ether_type = hdr.ethernet.ether_type;
        hdr.ethernet.ether_type = ETHERTYPE_LG;
    }

    table piggy_shim {
        actions = { add_next; }
        default_action = add_next();
        size = 1;
    }

    /* The register accesses in one stage, then the headers; flags where a gateway's one
     * condition would not do. */
    apply {
        bit<9> port = eg_intr_md.egress_port;
        lg_kind_t kind = hdr.carry.kind;
        emit = 0;
        ctl = 0;
        t = LG_TYPE_ACK;
        piggy = 0;
        if (hdr.carry.rx_update == 1) {
            /* A fresh data frame of port carry.port passing through: advance its ACK. */
            set_leading.execute(hdr.carry.port[8:0]);
            ack_budget_update.execute(hdr.carry.port[8:0]);
        } else if (meta.ec.rx_on == 0) {
            if (kind == KIND_ACK || kind == KIND_NOTIFY || kind == KIND_PAUSE
                || kind == KIND_RESUME) {
                meta.drop = 1;
            }
        } else if (kind == KIND_NOTIFY) {
            set_leading.execute(port);
            ctl = 1;
            emit = 1;
            t = LG_TYPE_ACK_LOSS;
            s = hdr.carry.ack;
        } else if (kind == KIND_PAUSE || kind == KIND_RESUME) {
            /* 802.1Qbb PFC on the normal priority: the sender's MAC pauses that queue. */
            ctl = 1;
        } else if (kind == KIND_ACK) {
            /* Dropped below when its budget is spent. */
            budget = ack_budget_update.execute(port);
            s = get_leading.execute(port);
            ctl = 1;
            emit = 1;
        } else {
            /* Piggyback on whatever else leaves a receiver port: data, retransmissions,
             * dummies (recirculation and loop ports have no receiver role). */
            s = get_leading.execute(port);
            emit = 1;
            if (!hdr.lg_data.isValid()) {
                piggy = 1;
                piggy_shim.apply();
            } else if (hdr.lg_data.dummy == 1) {
                hdr.lg_data.more = 1;
            } else {
                piggy = 1;
                hdr.lg_data.more = 1;
            }
        }
        if (hdr.carry.rx_update == 0 && meta.ec.rx_on == 1 && kind == KIND_ACK && budget == 0) {
            meta.drop = 1;
        }
        if (ctl == 1) {
            lg_control_frame.apply();
            if (kind == KIND_NOTIFY) {
                hdr.lg_loss.setValid();
                hdr.lg_loss.hole_size = hdr.carry.hole_size;
                hdr.lg_loss.first_lost = hdr.carry.first_lost;
            } else if (kind == KIND_PAUSE || kind == KIND_RESUME) {
                hdr.pfc.setValid();
                hdr.pfc.opcode = 0x0101;
                pfc_class.apply();
                if (kind == KIND_PAUSE) {
                    hdr.pfc.quanta = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF;
                } else {
                    hdr.pfc.quanta = 0;
                }
            }
        }
        if (emit == 1) {
            hdr.lg_ack.setValid();
            hdr.lg_ack.leading_ack = seq_bits.get({s[30:15]});
            ack_first.apply();
        }
    }
}

#endif
