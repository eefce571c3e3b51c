/* LinkGuardian (SIGCOMM'23) for Tofino (TNA): the protocol of docs/protocol.md with the kit's
 * wire format and configuration tables, written the Tofino way (docs/tofino.md): Register +
 * RegisterAction state, mirror sessions for notifications and copies, a recirculation port for
 * the Tx and reordering buffers, packet-generator timers for dummies and explicit ACKs, PFC. */
#include <core.p4>
#if __TARGET_TOFINO__ == 2
#include <t2na.p4>
#else
#include <tna.p4>
#endif

#include "include/headers.p4"
#include "include/parser.p4"
#include "include/sender.p4"
#include "include/receiver.p4"

action lg_set_global(inout lg_global_cfg_t cfg, bit<9> recirc_port, bit<32> recirc_session,
                     bit<3> prio_normal, bit<3> prio_high, bit<9> loop_port) {
    cfg.recirc_port = recirc_port;
    cfg.recirc_session = recirc_session;
    cfg.prio_normal = prio_normal;
    cfg.prio_high = prio_high;
    cfg.loop_port = loop_port;
}

action lg_set_port(inout lg_port_cfg_t cfg, bit<8> tx_epoch, bit<1> tx_on, bit<1> tx_blocking,
                   bit<16> tx_mgid, bit<8> dummy_repeat, bit<8> rx_epoch, bit<1> rx_on,
                   bit<8> rx_max_holes, bit<32> rx_timeout_us, bit<32> rx_pause_bytes,
                   bit<32> rx_resume_bytes, bit<8> ack_repeat, bit<32> port_session,
                   bit<19> ecn_qdepth, bit<32> drop_threshold, bit<32> tx_pause_timeout_us) {
    cfg.tx_epoch = tx_epoch;
    cfg.tx_on = tx_on;
    cfg.tx_blocking = tx_blocking;
    cfg.tx_mgid = tx_mgid;
    cfg.dummy_repeat = dummy_repeat;
    cfg.rx_epoch = rx_epoch;
    cfg.rx_on = rx_on;
    cfg.rx_max_holes = rx_max_holes;
    cfg.rx_timeout_us = rx_timeout_us;
    cfg.rx_pause_bytes = rx_pause_bytes;
    cfg.rx_resume_bytes = rx_resume_bytes;
    cfg.ack_repeat = ack_repeat;
    cfg.port_session = port_session;
    cfg.ecn_qdepth = ecn_qdepth;
    cfg.drop_threshold = drop_threshold;
    cfg.tx_pause_timeout_us = tx_pause_timeout_us;
}

/* Each lg_carry_h field in a PHV container of its own: passes write them from different sources. */
@pa_solitary("ingress", "hdr.carry.ack")
@pa_solitary("ingress", "hdr.carry.port")
/* Fields written by tables of one stage each in a container of their own (a container shared
 * with a field another table writes would push that table to a later stage). */
@pa_solitary("ingress", "meta.drop")
@pa_solitary("ingress", "meta.deliver")
@pa_solitary("ingress", "meta.verdict")
@pa_solitary("ingress", "meta.fresh")
@pa_solitary("ingress", "meta.pfc")
@pa_solitary("ingress", "meta.kcap")
@pa_solitary("ingress", "meta.tx_ahead")
@pa_solitary("ingress", "meta.h0")
@pa_solitary("ingress", "meta.h1")
@pa_solitary("ingress", "meta.h2")
@pa_solitary("ingress", "meta.h3")
@pa_solitary("ingress", "meta.g.recirc_port")
@pa_solitary("ingress", "meta.g.loop_port")
@pa_solitary("ingress", "meta.g.prio_normal")
@pa_solitary("ingress", "meta.g.prio_high")
@pa_solitary("ingress", "hdr.carry.kind")
@pa_solitary("ingress", "hdr.carry.first_pass")
@pa_solitary("ingress", "hdr.carry.skip")
@pa_solitary("ingress", "hdr.carry.rx_update")
@pa_solitary("ingress", "hdr.carry.ack_repeat")
@pa_solitary("ingress", "hdr.carry.hole_size")
control LgIngress(inout headers_t hdr, inout ig_meta_t meta,
                  in ingress_intrinsic_metadata_t ig_intr_md,
                  in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                  inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                  inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    LgTxIngress() sender;
    LgTxLoop() tx_loop;
    LgRxIngress() receiver;
    /* Time in units of 1.024 us (ns >> 10), through the hash unit (it does the shift). */
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) now_us;
    Counter<bit<32>, bit<9>>(LG_PORTS, CounterType_t.PACKETS_AND_BYTES) lg_cnt_a;
    Counter<bit<32>, bit<9>>(LG_PORTS, CounterType_t.PACKETS_AND_BYTES) lg_cnt_c;
    Counter<bit<32>, bit<9>>(LG_PORTS, CounterType_t.PACKETS_AND_BYTES) lg_cnt_d;

    table lg_global {
        actions = { lg_set_global(meta.g); @defaultonly NoAction; }
        size = 1;
        default_action = NoAction();
    }

    table lg_port {
        key = { meta.port: exact; }
        actions = { lg_set_port(meta.pc); @defaultonly NoAction; }
        size = LG_PORTS;
        default_action = NoAction();
    }

    /* The seq32s of lg_data and lg_ack, each in an action of its own (32 bits of hash output
     * per action), computed for every pass in the first stage. */
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) data_seq32;
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) ack_seq32;

    action set_data_seq() {
        meta.seq = data_seq32.get({hdr.lg_data.era, hdr.lg_data.seq_no, 15w0});
    }

    @stage(0)
    table data_seq {
        actions = { set_data_seq; }
        default_action = set_data_seq();
        size = 1;
    }

    action set_ack_seq() {
        meta.ack_seq = ack_seq32.get({hdr.lg_ack.era, hdr.lg_ack.leading_ack, 15w0});
    }

    table ack_seq {
        actions = { set_ack_seq; }
        default_action = set_ack_seq();
        size = 1;
    }

    /* A new lg_carry_h, every field written (Tofino writes its container whole). */
    action carry_new(lg_kind_t kind, bit<16> port) {
        hdr.carry.setValid();
        hdr.carry.kind = kind;
        hdr.carry.first_pass = 0;
        hdr.carry.skip = 0;
        hdr.carry.rx_update = 0;
        hdr.carry.port = port;
        hdr.carry.ack_repeat = 0;
        hdr.carry.buf_len = 0;
        hdr.carry.ack = 0;
        hdr.carry.first_lost = 0;
        hdr.carry.hole_size = 0;
    }

    /* Packet-generator timer applications: which port gets a dummy or an explicit ACK. */
    action lg_timer(bit<9> port, lg_kind_t kind) {
        carry_new(kind, (bit<16>)port);
        ig_tm_md.ucast_egress_port = port;
        hdr.timer.setInvalid();
    }

    action lg_timer_unknown() {
        hdr.timer.setInvalid();
        meta.drop = 1;
    }

    table lg_timers {
        key = { hdr.timer.app_id: exact; hdr.timer.batch_id: exact; }
        actions = { lg_timer; @defaultonly lg_timer_unknown; }
        size = 64;
        default_action = lg_timer_unknown();
    }

    action ipv4_forward(bit<48> dst_addr, bit<9> port) {
        meta.l3 = 1;
        meta.l3_port = port;
        meta.l3_dmac = dst_addr;
    }

    action drop() { meta.l3 = 2; }

    action l2_forward(bit<9> port) {
        meta.l2 = 1;
        meta.l2_port = port;
    }

    action l2_flood(bit<16> group) {
        meta.l2 = 2;
        meta.l2_group = group;
    }

    action l2_drop() { meta.l2 = 3; }

    /* The tables and action parameters of p4/include/forwarding.p4 (l2_fwd's drop is named
     * l2_drop here): looked up in parallel, applied where a frame is delivered. */
    table ipv4_lpm {
        key = { hdr.ipv4.dst_addr: lpm; }
        actions = { ipv4_forward; drop; NoAction; }
        size = 1024;
        default_action = NoAction();
    }

    table l2_fwd {
        key = { hdr.ethernet.dst_addr: exact; }
        actions = { l2_forward; l2_flood; l2_drop; }
        size = 1024;
        default_action = l2_drop();
    }

    action route() {
        ig_tm_md.ucast_egress_port = meta.l3_port;
        hdr.ethernet.src_addr = hdr.ethernet.dst_addr;
        hdr.ethernet.dst_addr = meta.l3_dmac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    action strip() {
        hdr.lg_data.setInvalid();
        hdr.lg_ack.setInvalid();
        hdr.lg_loss.setInvalid();
        hdr.lg_ctrl.setInvalid();
        hdr.lg_next.setInvalid();
        hdr.carry.kind = KIND_NONE;
    }

    /* Leaving the protected link: the LG shim goes. */
    table lg_strip {
        actions = { strip; }
        default_action = strip();
        size = 1;
    }

    /* What each pass needs is computed in the first stages for every pass (configuration,
     * seq32s, time), so the sender's and the receiver's register accesses run in parallel. */
    apply {
        lg_global.apply();
        lg_port.apply();
        meta.now = now_us.get({ig_prsr_md.global_tstamp[41:10]});
        data_seq.apply();
        ack_seq.apply();
        if (hdr.ipv4.isValid()) { ipv4_lpm.apply(); }
        l2_fwd.apply();
        if (meta.l3 == 1) { meta.out_port = meta.l3_port; } else { meta.out_port = meta.l2_port; }
        /* The sender's register accesses: ACKs and notifications (alone or piggybacked on
         * data) and Tx-buffer copies. */
        if (!hdr.timer.isValid() && (meta.txcopy == 1
                                     || (meta.looped == 0 && hdr.lg_ack.isValid()))) {
            sender.apply(hdr, meta, ig_intr_md, ig_dprsr_md, ig_tm_md);
        }
        if (hdr.timer.isValid()) {
            /* A timer packet goes straight to its port's egress, where the budget decides. */
            lg_timers.apply();
        } else {
            if (meta.looped == 0) {
                carry_new(KIND_NONE, (bit<16>)meta.port);
                lg_cnt_c.count(meta.port);
            }
            if (meta.txcopy == 1) {
                tx_loop.apply(hdr, meta, ig_tm_md);
            } else if (hdr.lg_data.isValid() && meta.pc.rx_on == 1) {
                receiver.apply(hdr, meta, ig_dprsr_md, ig_tm_md);
            } else if (meta.looped == 1) {
                meta.drop = 1;
            } else if (hdr.lg_data.isValid()) {
                if (hdr.lg_data.dummy == 1) { meta.drop = 1; } else { meta.deliver = 1; }
            } else if ((hdr.lg_ack.isValid() && !hdr.lg_next.isValid()) || hdr.lg_ctrl.isValid()) {
                meta.drop = 1;  /* control only (a piggybacked ACK has lg_next behind it) */
            } else {
                meta.deliver = 1;
            }
        }

        if (meta.drop == 1) {
            ig_dprsr_md.drop_ctl = 1;
        } else if (meta.deliver == 1) {
            /* Leave the protected link: strip the LG shim and forward (IPv4 with TTL <= 1 is
             * dropped, as p4/include/forwarding.p4 does). */
            if (hdr.lg_next.isValid()) { hdr.ethernet.ether_type = hdr.lg_next.ether_type; }
            lg_strip.apply();
            lg_cnt_d.count(meta.port);
            if (hdr.ipv4.isValid() && hdr.ipv4.ttl <= 1) {
                ig_dprsr_md.drop_ctl = 1;
            } else if (meta.l3 == 1) {
                route();
            } else if (meta.l3 == 2) {
                ig_dprsr_md.drop_ctl = 1;
            } else if (meta.l2 == 1) {
                ig_tm_md.ucast_egress_port = meta.l2_port;
            } else if (meta.l2 == 2) {
                ig_tm_md.mcast_grp_a = meta.l2_group;
            } else {
                ig_dprsr_md.drop_ctl = 1;
            }
            ig_tm_md.qid = (QueueId_t)meta.g.prio_normal;
            lg_cnt_a.count(meta.out_port);
        }
    }
}

control LgEgress(inout headers_t hdr, inout eg_meta_t meta,
                 in egress_intrinsic_metadata_t eg_intr_md,
                 in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                 inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                 inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    LgTxEgress() sender;
    LgRxEgress() receiver;
    Counter<bit<32>, bit<9>>(LG_PORTS, CounterType_t.PACKETS_AND_BYTES) lg_cnt_b;
    Counter<bit<32>, bit<9>>(LG_PORTS, CounterType_t.PACKETS) lg_cnt_corrupt_drops;
    Random<bit<31>>() draw;
    Register<bit<32>, bit<9>>(LG_PORTS, 0) lg_qdepth_max;
    RegisterAction<bit<32>, bit<9>, bit<32>>(lg_qdepth_max) qdepth_seen = {
        void apply(inout bit<32> v) {
            if ((bit<32>)eg_intr_md.enq_qdepth > v) { v = (bit<32>)eg_intr_md.enq_qdepth; }
        }
    };

    table lg_global {
        actions = { lg_set_global(meta.g); @defaultonly NoAction; }
        size = 1;
        default_action = NoAction();
    }

    table lg_port {
        key = { eg_intr_md.egress_port: exact; }
        actions = { lg_set_port(meta.ec); @defaultonly NoAction; }
        size = LG_PORTS;
        default_action = NoAction();
    }

    /* Queue depth against the ECN threshold and the random draw against the drop threshold, by
     * subtraction in an action (a Tofino gateway compares a field with a constant only). The
     * draw is 31 bits against drop_threshold[31:1]: the same probability within 2^-32. */
    bit<32> qdiff;
    bit<32> ddiff;
    bit<32> rnd;
    bit<32> half;
    bit<32> qd;
    bit<32> qt;

    action compare() {
        qdiff = qd - qt;
        ddiff = half - rnd;
    }

    table lg_compare {
        actions = { compare; }
        default_action = compare();
        size = 1;
    }

    /* Conditions on fields in each gateway, no flags computed in a stage of their own. */
    apply {
        bit<9> port = eg_intr_md.egress_port;
        lg_global.apply();
        lg_port.apply();
        rnd = (bit<32>)draw.get();
        qd = (bit<32>)eg_intr_md.enq_qdepth;
        sender.apply(hdr, meta, eg_intr_md);
        /* A looping pass (a Tx copy or a buffered frame: ingress sends these kinds only to the
         * recirculation and loop ports) keeps lg_carry_h and gets no LG fields. */
        if (hdr.carry.kind == KIND_TXCOPY || hdr.carry.kind == KIND_RXBUF) {
            /* back to ingress */
        } else {
            receiver.apply(hdr, meta, eg_intr_md);
            qdepth_seen.execute(port);
            half = meta.ec.drop_threshold >> 1;
            qt = (bit<32>)meta.ec.ecn_qdepth;
            lg_compare.apply();
            if (meta.drop == 0) {
                if (hdr.ipv4.isValid() && hdr.ipv4.ecn != 0 && meta.ec.ecn_qdepth != 0
                    && qdiff[31:31] == 0) {
                    hdr.ipv4.ecn = 3;
                }
                lg_cnt_b.count(port);
                if (meta.ec.drop_threshold != 0 && ddiff[31:31] == 0) {
                    meta.drop = 1;
                    lg_cnt_corrupt_drops.count(port);
                }
            }
            hdr.carry.setInvalid();
        }
        if (meta.mirror.isValid()) { eg_dprsr_md.mirror_type = 1; }
        if (meta.drop == 1) { eg_dprsr_md.drop_ctl = 1; }
    }
}

Pipeline(LgIngressParser(), LgIngress(), LgIngressDeparser(),
         LgEgressParser(), LgEgress(), LgEgressDeparser()) pipe;

Switch(pipe) main;
