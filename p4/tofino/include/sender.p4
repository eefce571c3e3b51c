/* TNA LG sender: ACKs and loss notifications (ingress), the Tx buffer of copies looping through
 * the recirculation port, N-copy retransmission by multicast, seq_no and the dummy (egress). */
#ifndef LGT_SENDER_P4
#define LGT_SENDER_P4

/* reTxReqs: hole j of a notification is bit (first_lost + j) of register j, set by the
 * notification, read and cleared by each loop of a Tx copy but its first pass (a notification
 * can come before that pass, on a switch slow to recirculate): both accesses in one table, the
 * action chosen by meta.looped and meta.in_first_pass (a register is accessed from one table,
 * once per pass). */
#define LG_HOLE_REG(J) \
    Register<bit<1>, hole_idx_t>(1 << 20, 0) holes_##J; \
    RegisterAction<bit<1>, hole_idx_t, bit<1>>(holes_##J) mark_##J = { \
        void apply(inout bit<1> v) { v = 1; } }; \
    RegisterAction<bit<1>, hole_idx_t, bit<1>>(holes_##J) take_##J = { \
        void apply(inout bit<1> v, out bit<1> rv) { rv = v; v = 0; } }; \
    Hash<hole_idx_t>(HashAlgorithm_t.IDENTITY) hole_at_##J; \
    action do_mark_##J() { mark_##J.execute(hole_at_##J.get({meta.port[7:0], meta.hs##J})); } \
    action do_take_##J() { meta.h##J = take_##J.execute(hole_at_##J.get({meta.port[7:0], meta.hs##J})); } \
    table hole_##J { \
        key = { meta.looped: exact; meta.in_first_pass: exact; } \
        actions = { do_mark_##J; do_take_##J; @defaultonly NoAction; } \
        const entries = { (0, 0): do_mark_##J(); (1, 0): do_take_##J(); } \
        size = 2; \
        default_action = NoAction(); \
    }

control LgTxIngress(inout headers_t hdr, inout ig_meta_t meta,
                    in ingress_intrinsic_metadata_t ig_intr_md,
                    inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                    inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    /* Receiver's latest seq32, as last reported (serial maximum). */
    Register<bit<32>, bit<9>>(LG_PORTS, 32w0xFFFF8000) leading_ack;
    RegisterAction<bit<32>, bit<9>, bit<8>>(leading_ack) report = {
        void apply(inout bit<32> v) {
            if (meta.ack_seq - v < 32w0x80000000) { v = meta.ack_seq; }
        }
    };
    /* 1 when the copy's seq is ahead of the leading ACK (serial order): not yet known received. */
    RegisterAction<bit<32>, bit<9>, bit<8>>(leading_ack) ahead_of_leading = {
        void apply(inout bit<32> v, out bit<8> rv) {
            rv = 0;
            if (meta.seq - v < 32w0x80000000 && meta.seq != v) { rv = 1; }
        }
    };

    action do_report() { report.execute(meta.port); }
    action do_ahead() { meta.tx_ahead = ahead_of_leading.execute(meta.port); }

    /* An ACK reports (looped 0), a Tx copy tests (looped 1): one table, one access per pass. */
    table leading {
        key = { meta.looped: exact; }
        actions = { do_report; do_ahead; @defaultonly NoAction; }
        const entries = { 0: do_report(); 1: do_ahead(); }
        size = 2;
        default_action = NoAction();
    }

    /* Tx-buffer copies that left the buffer: packets (lo) and bytes (hi). */
    Register<pair_t, bit<9>>(LG_PORTS, {0, 0}) tx_buf_removed;
    RegisterAction<pair_t, bit<9>, bit<32>>(tx_buf_removed) buf_remove = {
        void apply(inout pair_t v) { v.lo = v.lo + 1; v.hi = v.hi + (bit<32>)meta.in_buf_len; }
    };

    LG_HOLE_REG(0)
    LG_HOLE_REG(1)
    LG_HOLE_REG(2)
    LG_HOLE_REG(3)

    /* Where each hole register is accessed: a notification's holes, or the copy's own seq. */
    action holes_of_notification() {
        meta.hs0 = hdr.lg_loss.first_lost[11:0];
        meta.hs1 = hdr.lg_loss.first_lost[11:0] + 1;
        meta.hs2 = hdr.lg_loss.first_lost[11:0] + 2;
        meta.hs3 = hdr.lg_loss.first_lost[11:0] + 3;
    }

    action holes_of_copy() {
        meta.hs0 = hdr.lg_data.seq_no[11:0];
        meta.hs1 = hdr.lg_data.seq_no[11:0];
        meta.hs2 = hdr.lg_data.seq_no[11:0];
        meta.hs3 = hdr.lg_data.seq_no[11:0];
    }

    table hole_seqs {
        key = { meta.looped: exact; }
        actions = { holes_of_notification; holes_of_copy; }
        const entries = { 0: holes_of_notification(); 1: holes_of_copy(); }
        size = 2;
        default_action = holes_of_copy();
    }

    apply {
        /* Where the holes are, then the register accesses (in parallel). A notification marks
         * up to LG_MAX_HOLES_TNA holes; a Tx copy after its first pass reads and clears its own. */
        hole_seqs.apply();
        if (meta.pc.tx_on == 1) {
            if (meta.looped == 1 || hdr.lg_ack.isValid()) { leading.apply(); }
            if (meta.looped == 1 || (hdr.lg_loss.isValid() && hdr.lg_loss.hole_size > 0)) { hole_0.apply(); }
            if (meta.looped == 1 || (hdr.lg_loss.isValid() && hdr.lg_loss.hole_size > 1)) { hole_1.apply(); }
            if (meta.looped == 1 || (hdr.lg_loss.isValid() && hdr.lg_loss.hole_size > 2)) { hole_2.apply(); }
            if (meta.looped == 1 || (hdr.lg_loss.isValid() && hdr.lg_loss.hole_size > 3)) { hole_3.apply(); }
        }
        if (meta.looped == 1
            && (meta.pc.tx_on == 0 || (meta.in_first_pass == 0 && meta.tx_ahead == 0))) {
            buf_remove.execute(meta.port);  /* the copy leaves the Tx buffer */
        }
    }
}

/* One loop of a buffered copy: keep (a first pass, which leaves its holes marked, or not yet
 * known received), retransmit N copies (a hole), or drop: from what LgTxIngress found. */
control LgTxLoop(inout headers_t hdr, inout ig_meta_t meta,
                 inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        if (meta.pc.tx_on == 0) {
            meta.drop = 1;
        } else if (meta.in_first_pass == 1 || meta.tx_ahead == 1) {
            hdr.carry.first_pass = 0;
            if (meta.g.loop_port == 0) {
                ig_tm_md.ucast_egress_port = meta.g.recirc_port;
            } else {
                ig_tm_md.ucast_egress_port = meta.g.loop_port;
            }
            ig_tm_md.qid = 0;
        } else if (meta.h0 == 1 || meta.h1 == 1 || meta.h2 == 1 || meta.h3 == 1) {
            hdr.carry.kind = KIND_RETX;
            ig_tm_md.mcast_grp_a = meta.pc.tx_mgid;
            ig_tm_md.qid = (QueueId_t)meta.g.prio_high;
        } else {
            meta.drop = 1;
        }
    }
}

control LgTxEgress(inout headers_t hdr, inout eg_meta_t meta,
                   in egress_intrinsic_metadata_t eg_intr_md) {
    /* The next data frame's (era, seq_no) as a counter: bit 16 the era, bits 15:0 seq_no. */
    Register<bit<32>, bit<9>>(LG_PORTS, 0) tx_next;
    RegisterAction<bit<32>, bit<9>, bit<32>>(tx_next) next_seq = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; v = v + 1; }
    };
    RegisterAction<bit<32>, bit<9>, bit<32>>(tx_next) last_seq = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v - 1; }
    };
    /* Dummies still allowed since the last data frame (the notify count): a dummy spends one
     * (returning the budget before), a data frame refills it. One RegisterAction for both, as
     * `ack_budget` (docs/tofino.md, Tofino 2: a bf-p4c internal error). */
    Register<bit<8>, bit<9>>(LG_PORTS, 0) dummy_budget;
    RegisterAction<bit<8>, bit<9>, bit<8>>(dummy_budget) dummy_budget_update = {
        void apply(inout bit<8> v, out bit<8> rv) {
            rv = v;
            if (hdr.carry.kind != KIND_DUMMY) {
                v = meta.ec.dummy_repeat;
            } else if (v != 0) {
                v = v - 1;
            }
        }
    };
    /* Copies put in the Tx buffer: packets (lo) and bytes (hi). */
    Register<pair_t, bit<9>>(LG_PORTS, {0, 0}) tx_buf_added;
    RegisterAction<pair_t, bit<9>, bit<32>>(tx_buf_added) buf_add = {
        void apply(inout pair_t v) { v.lo = v.lo + 1; v.hi = v.hi + (bit<32>)hdr.carry.buf_len; }
    };

    bit<32> s;          /* tx_next's (era, seq_no) for this frame */
    bit<8> budget;
    bit<1> first;       /* lg_data's first byte and seq_no to (re)write */

    /* lg_data's first byte comes whole from action data (a PHV container is written from one
     * source), looked up on what varies: the kind of frame, the era, the blocking mode. */
    action set_data_first(bit<1> era, bit<1> retx, bit<1> dummy, bit<1> blocking) {
        hdr.lg_data.pkt_type = LG_TYPE_DATA;
        hdr.lg_data.more = 0;
        hdr.lg_data.era = era;
        hdr.lg_data.retx = retx;
        hdr.lg_data.dummy = dummy;
        hdr.lg_data.blocking = blocking;
        hdr.lg_data.rx_buffered = 0;
    }

    table data_first {
        key = {
            hdr.carry.kind: ternary;
            s[16:16]: ternary;
            hdr.lg_data.era: ternary;
            hdr.lg_data.dummy: ternary;
            meta.ec.tx_blocking: ternary;
        }
        actions = { set_data_first; @defaultonly NoAction; }
        const entries = {
            (KIND_NONE, 0, _, _, 0): set_data_first(0, 0, 0, 0);
            (KIND_NONE, 0, _, _, 1): set_data_first(0, 0, 0, 1);
            (KIND_NONE, 1, _, _, 0): set_data_first(1, 0, 0, 0);
            (KIND_NONE, 1, _, _, 1): set_data_first(1, 0, 0, 1);
            (KIND_DUMMY, 0, _, _, 0): set_data_first(0, 0, 1, 0);
            (KIND_DUMMY, 0, _, _, 1): set_data_first(0, 0, 1, 1);
            (KIND_DUMMY, 1, _, _, 0): set_data_first(1, 0, 1, 0);
            (KIND_DUMMY, 1, _, _, 1): set_data_first(1, 0, 1, 1);
            (KIND_RETX, _, 0, 0, 0): set_data_first(0, 1, 0, 0);
            (KIND_RETX, _, 0, 0, 1): set_data_first(0, 1, 0, 1);
            (KIND_RETX, _, 0, 1, 0): set_data_first(0, 1, 1, 0);
            (KIND_RETX, _, 0, 1, 1): set_data_first(0, 1, 1, 1);
            (KIND_RETX, _, 1, 0, 0): set_data_first(1, 1, 0, 0);
            (KIND_RETX, _, 1, 0, 1): set_data_first(1, 1, 0, 1);
            (KIND_RETX, _, 1, 1, 0): set_data_first(1, 1, 1, 0);
            (KIND_RETX, _, 1, 1, 1): set_data_first(1, 1, 1, 1);
        }
        size = 16;
        default_action = NoAction();
    }

    /* A dummy: lg_data alone (header validity set in a table action, not a gateway branch). */
    action make_dummy() {
        hdr.ethernet.ether_type = ETHERTYPE_LG;
        hdr.lg_data.setValid();
        hdr.lg_next.setInvalid();
        hdr.ipv4.setInvalid();
    }

    table dummy_frame {
        actions = { make_dummy; }
        default_action = make_dummy();
        size = 1;
    }

    /* A data frame: the LG shim (lg_data, lg_next) goes in. */
    action add_shim() {
        hdr.lg_next.setValid();
        hdr.lg_data.setValid();
        hdr.lg_next.ether_type = hdr.ethernet.ether_type;
        hdr.ethernet.ether_type = ETHERTYPE_LG;
    }

    table shim_frame {
        actions = { add_shim; }
        default_action = add_shim();
        size = 1;
    }

    /* The register accesses in one stage, then the header, then the dummy's budget verdict. */
    apply {
        bit<9> port = eg_intr_md.egress_port;
        lg_kind_t kind = hdr.carry.kind;
        first = 0;
        if (kind == KIND_TXCOPY && port == meta.g.recirc_port) {
            /* A Tx-buffer copy on its way to the recirculation port: counted in once, on the
             * pass the egress mirror made (its later loops have first_pass 0). */
            if (hdr.carry.first_pass == 1) { buf_add.execute(hdr.carry.port[8:0]); }
            /* The mirror copied the frame as it left, perhaps with a piggybacked ACK: drop it. */
            hdr.lg_data.more = 0;
            hdr.lg_ack.setInvalid();
        } else if (meta.ec.tx_on == 0) {
            if (kind == KIND_DUMMY) { meta.drop = 1; }
        } else if (kind == KIND_DUMMY) {
            /* A dummy carries the last seq sent; dropped below when its budget is spent. */
            budget = dummy_budget_update.execute(port);
            s = last_seq.execute(port);
            dummy_frame.apply();
            first = 1;
        } else if (kind == KIND_RETX) {
            /* A retransmitted copy: retx set, no ACK of its own, not buffered. */
            first = 1;
            hdr.lg_ack.setInvalid();
        } else if (kind == KIND_NONE && !hdr.lg_data.isValid()) {
            shim_frame.apply();
            s = next_seq.execute(port);
            first = 1;
            dummy_budget_update.execute(port);
            /* Tx buffer: an egress mirror (with the LG header) to the recirculation port. */
            meta.mirror.setValid();
            meta.mirror.kind = KIND_TXCOPY;
            meta.mirror.first_pass = 1;
            meta.mirror.port = (bit<16>)port;
            meta.mirror.buf_len = eg_intr_md.pkt_length + 5;
            meta.session = (MirrorId_t)meta.g.recirc_session;
        }
        if (first == 1) {
            data_first.apply();
            if (kind != KIND_RETX) { hdr.lg_data.seq_no = s[15:0]; }
        }
        if (meta.ec.tx_on == 1 && kind == KIND_DUMMY && budget == 0) { meta.drop = 1; }
    }
}

#endif
