/* TNA LG sender: ACKs and loss notifications (ingress), the Tx buffer of copies looping through
 * the recirculation port, N-copy retransmission by multicast, seq_no and the dummy (egress). */
#ifndef LGT_SENDER_P4
#define LGT_SENDER_P4

/* reTxReqs: hole j of a notification is bit (first_lost + j) of register j. Read-and-clear. */
#define LG_HOLE_REG(J) \
    Register<bit<1>, hole_idx_t>(1 << 20, 0) holes_##J; \
    RegisterAction<bit<1>, hole_idx_t, bit<1>>(holes_##J) mark_##J = { \
        void apply(inout bit<1> v) { v = 1; } }; \
    RegisterAction<bit<1>, hole_idx_t, bit<1>>(holes_##J) take_##J = { \
        void apply(inout bit<1> v, out bit<1> rv) { rv = v; v = 0; } };

control LgTxIngress(inout headers_t hdr, inout ig_meta_t meta,
                    in ingress_intrinsic_metadata_t ig_intr_md,
                    inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                    inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    /* Receiver's latest seq32, as last reported (serial maximum). */
    Register<bit<32>, bit<9>>(LG_PORTS, 32w0xFFFF8000) leading_ack;
    RegisterAction<bit<32>, bit<9>, bit<32>>(leading_ack) report = {
        void apply(inout bit<32> v) {
            if (meta.seq - v < 32w0x80000000) { v = meta.seq; }
        }
    };
    /* 1 when meta.seq is ahead of the leading ACK (serial order): not yet known received. */
    RegisterAction<bit<32>, bit<9>, bit<8>>(leading_ack) ahead_of_leading = {
        void apply(inout bit<32> v, out bit<8> rv) {
            rv = 0;
            if (meta.seq - v < 32w0x80000000 && meta.seq != v) { rv = 1; }
        }
    };
    /* Tx-buffer copies that left the buffer: packets (lo) and bytes (hi). */
    Register<pair_t, bit<9>>(LG_PORTS, {0, 0}) tx_buf_removed;
    RegisterAction<pair_t, bit<9>, bit<32>>(tx_buf_removed) buf_remove = {
        void apply(inout pair_t v) { v.lo = v.lo + 1; v.hi = v.hi + (bit<32>)hdr.carry.buf_len; }
    };
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) seq32;
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) copy32;
    /* reTxReqs index port[7:0] ++ seq[11:0], through the hash unit. */
    Hash<hole_idx_t>(HashAlgorithm_t.IDENTITY) hole_at0;
    Hash<hole_idx_t>(HashAlgorithm_t.IDENTITY) hole_at1;
    Hash<hole_idx_t>(HashAlgorithm_t.IDENTITY) hole_at2;
    Hash<hole_idx_t>(HashAlgorithm_t.IDENTITY) hole_at3;
    Hash<hole_idx_t>(HashAlgorithm_t.IDENTITY) copy_at;
    LG_HOLE_REG(0)
    LG_HOLE_REG(1)
    LG_HOLE_REG(2)
    LG_HOLE_REG(3)

    /* The copy's seq32, in an action of its own (32 bits of hash output per action). */
    action set_copy_seq() { meta.seq = copy32.get({hdr.lg_data.era, hdr.lg_data.seq_no, 15w0}); }

    table copy_seq {
        actions = { set_copy_seq; }
        default_action = set_copy_seq();
        size = 1;
    }

    bit<12> first;
    bit<8> h;
    bit<8> hit;

    apply {
        /* A notification marks up to LG_MAX_HOLES_TNA holes, then its leading ACK counts. */
        if (hdr.lg_ack.isValid() && meta.pc.tx_on == 1 && meta.looped == 0) {
            meta.seq = seq32.get({hdr.lg_ack.era, hdr.lg_ack.leading_ack, 15w0});
            if (hdr.lg_loss.isValid()) {
                first = hdr.lg_loss.first_lost[11:0];
                h = hdr.lg_loss.hole_size;
                bit<12> f1 = first + 1;
                bit<12> f2 = first + 2;
                bit<12> f3 = first + 3;
                hole_idx_t i0 = hole_at0.get({meta.port[7:0], first});
                hole_idx_t i1 = hole_at1.get({meta.port[7:0], f1});
                hole_idx_t i2 = hole_at2.get({meta.port[7:0], f2});
                hole_idx_t i3 = hole_at3.get({meta.port[7:0], f3});
                if (h > 0) { mark_0.execute(i0); }
                if (h > 1) { mark_1.execute(i1); }
                if (h > 2) { mark_2.execute(i2); }
                if (h > 3) { mark_3.execute(i3); }
            }
            report.execute(meta.port[8:0]);
        } else if (meta.looped == 1) {
            /* One loop of a buffered copy: keep, retransmit N copies, or drop. */
            copy_seq.apply();
            hole_idx_t idx = copy_at.get({meta.port[7:0], hdr.lg_data.seq_no[11:0]});
            bit<8> ahead = ahead_of_leading.execute(meta.port[8:0]);
            bit<1> h0 = take_0.execute(idx);
            bit<1> h1 = take_1.execute(idx);
            bit<1> h2 = take_2.execute(idx);
            bit<1> h3 = take_3.execute(idx);
            hit = 0;  /* one simple condition per hole register (Tofino gateways) */
            if (h0 != 0) { hit = 1; }
            if (h1 != 0) { hit = 1; }
            if (h2 != 0) { hit = 1; }
            if (h3 != 0) { hit = 1; }
            bit<1> keep = 0;  /* a first pass, or the copy is ahead of the leading ACK */
            if (hdr.carry.first_pass == 1) { keep = 1; }
            if (ahead == 1) { keep = 1; }
            if (meta.pc.tx_on == 0) {
                meta.drop = 1;
            } else if (keep == 1) {
                /* Not yet known to be received (a first pass clears stale holes): loop. */
                hdr.carry.first_pass = 0;
                ig_tm_md.ucast_egress_port = meta.g.loop_port;
                ig_tm_md.qid = 0;
            } else if (hit != 0) {
                hdr.carry.kind = KIND_RETX;
                ig_tm_md.mcast_grp_a = meta.pc.tx_mgid;
                ig_tm_md.qid = (QueueId_t)meta.g.prio_high;
            } else {
                meta.drop = 1;
            }
            if (meta.drop == 1 || hdr.carry.kind == KIND_RETX) { buf_remove.execute(meta.port[8:0]); }
        }
    }
}

control LgTxEgress(inout headers_t hdr, inout eg_meta_t meta,
                   in egress_intrinsic_metadata_t eg_intr_md) {
    Register<bit<32>, bit<9>>(LG_PORTS, 0) tx_next;       /* seq32 of the next data frame */
    RegisterAction<bit<32>, bit<9>, bit<32>>(tx_next) next_seq = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; v = v + SEQ_STEP; }
    };
    RegisterAction<bit<32>, bit<9>, bit<32>>(tx_next) last_seq = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v - SEQ_STEP; }
    };
    /* Dummies still allowed since the last data frame (the notify count). */
    Register<bit<8>, bit<9>>(LG_PORTS, 0) dummy_budget;
    RegisterAction<bit<8>, bit<9>, bit<8>>(dummy_budget) refill = {
        void apply(inout bit<8> v) { v = meta.ec.dummy_repeat; }
    };
    RegisterAction<bit<8>, bit<9>, bit<8>>(dummy_budget) spend = {
        void apply(inout bit<8> v, out bit<8> rv) {
            rv = v;
            if (v != 0) { v = v - 1; }
        }
    };
    /* Copies put in the Tx buffer: packets (lo) and bytes (hi). */
    Register<pair_t, bit<9>>(LG_PORTS, {0, 0}) tx_buf_added;
    RegisterAction<pair_t, bit<9>, bit<32>>(tx_buf_added) buf_add = {
        void apply(inout pair_t v) { v.lo = v.lo + 1; v.hi = v.hi + (bit<32>)hdr.carry.buf_len; }
    };

    /* The lg_data_h being built. Its first byte comes whole from action data (a PHV container
     * is written from one source), looked up on the bits that vary; seq_no via the hash unit. */
    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) seq_bits;
    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) dummy_seq;
    bit<1> k_retx;
    bit<1> k_era;
    bit<1> k_dummy;

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
        key = { k_retx: exact; k_era: exact; k_dummy: exact; meta.ec.tx_blocking: exact; }
        actions = { set_data_first; }
        const entries = {
            (0, 0, 0, 0): set_data_first(0, 0, 0, 0);
            (0, 0, 0, 1): set_data_first(0, 0, 0, 1);
            (0, 0, 1, 0): set_data_first(0, 0, 1, 0);
            (0, 0, 1, 1): set_data_first(0, 0, 1, 1);
            (0, 1, 0, 0): set_data_first(1, 0, 0, 0);
            (0, 1, 0, 1): set_data_first(1, 0, 0, 1);
            (0, 1, 1, 0): set_data_first(1, 0, 1, 0);
            (0, 1, 1, 1): set_data_first(1, 0, 1, 1);
            (1, 0, 0, 0): set_data_first(0, 1, 0, 0);
            (1, 0, 0, 1): set_data_first(0, 1, 0, 1);
            (1, 0, 1, 0): set_data_first(0, 1, 1, 0);
            (1, 0, 1, 1): set_data_first(0, 1, 1, 1);
            (1, 1, 0, 0): set_data_first(1, 1, 0, 0);
            (1, 1, 0, 1): set_data_first(1, 1, 0, 1);
            (1, 1, 1, 0): set_data_first(1, 1, 1, 0);
            (1, 1, 1, 1): set_data_first(1, 1, 1, 1);
        }
        size = 16;
    }

    /* A dummy: lg_data alone (header validity set in a table action, not a gateway branch). */
    action make_dummy() {
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
    }

    table shim_frame {
        actions = { add_shim; }
        default_action = add_shim();
        size = 1;
    }

    apply {
        bit<1> first = 0;  /* lg_data's first byte to (re)write */
        bit<9> port = eg_intr_md.egress_port;
        lg_kind_t kind = hdr.carry.kind;
        if (kind == KIND_TXCOPY && port == meta.g.recirc_port) {
            /* A new Tx-buffer copy (egress mirror) on its way to the recirculation port. */
            buf_add.execute(hdr.carry.port[8:0]);
            /* The mirror copied the frame as it left, perhaps with a piggybacked ACK: drop it. */
            hdr.lg_data.more = 0;
            hdr.lg_ack.setInvalid();
        } else if (meta.ec.tx_on == 0) {
            if (kind == KIND_DUMMY) { meta.drop = 1; }
        } else if (kind == KIND_DUMMY) {
            if (spend.execute(port) == 0) {
                meta.drop = 1;
            } else {
                bit<32> s = last_seq.execute(port);
                hdr.ethernet.ether_type = ETHERTYPE_LG;
                dummy_frame.apply();
                hdr.lg_data.seq_no = dummy_seq.get({s[30:15]});
                k_retx = 0;
                k_era = s[31:31];
                k_dummy = 1;
                first = 1;
            }
        } else if (kind == KIND_RETX) {
            /* A retransmitted copy: retx set, no ACK of its own, not buffered. */
            k_retx = 1;
            k_era = hdr.lg_data.era;
            k_dummy = hdr.lg_data.dummy;
            first = 1;
            hdr.lg_ack.setInvalid();
        } else if (kind == KIND_NONE && !hdr.lg_data.isValid()) {
            shim_frame.apply();
            hdr.lg_next.ether_type = hdr.ethernet.ether_type;
            bit<32> s = next_seq.execute(port);
            hdr.ethernet.ether_type = ETHERTYPE_LG;
            hdr.lg_data.seq_no = seq_bits.get({s[30:15]});
            k_retx = 0;
            k_era = s[31:31];
            k_dummy = 0;
            first = 1;
            refill.execute(port);
            /* Tx buffer: an egress mirror (with the LG header) to the recirculation port. */
            meta.mirror.setValid();
            meta.mirror.kind = KIND_TXCOPY;
            meta.mirror.first_pass = 1;
            meta.mirror.port = (bit<16>)port;
            meta.mirror.buf_len = eg_intr_md.pkt_length + 5;
            meta.session = (bit<10>)meta.g.recirc_session;
        }
        if (first == 1) { data_first.apply(); }
    }
}

#endif
