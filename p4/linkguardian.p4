/* LinkGuardian (SIGCOMM'23) for v1model: link-local retransmission that masks corruption loss
 * on protected switch-to-switch links. LG (ordered) and LG_NB (non-blocking) per port, switched
 * at run time. See docs/protocol.md for the wire format, the state and every parameter. */
#include <core.p4>
#include <v1model.p4>

#include "include/defines.p4"
#include "include/headers.p4"
#include "include/counters.p4"
#include "include/buffers.p4"
#include "include/parser.p4"
#include "include/forwarding.p4"
#include "include/lg_sender.p4"
#include "include/lg_receiver.p4"
#include "include/config.p4"
#include "include/ecn.p4"
#include "include/corruption.p4"

control LgIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    LgTxFeedback() feedback;
    LgRxIngress() receiver;
    LgTxCopy() tx_copy;
    LgTxHold() hold;
    LgForwarding() forwarding;
    LgGlobalConfig() global_cfg;
    LgPortConfig() pass_cfg;
    LgPortConfig() out_cfg;

    apply {
        global_cfg.apply(meta.g);
        bool recirc = standard_metadata.instance_type == INSTANCE_RECIRC;
        lg_kind_t kind = meta.lg.kind;
        if (recirc) {
            meta.l.now = meta.lg.now;
        } else {
            meta.l.now = standard_metadata.ingress_global_timestamp;
            meta.lg.kind = KIND_NONE;
            kind = KIND_NONE;
            meta.lg.port = standard_metadata.ingress_port;
        }
        pass_cfg.apply(meta.lg.port, meta.pc);
        if (!recirc) {
            lg_cnt_c.count((bit<32>)standard_metadata.ingress_port);
            if (hdr.lg_ack.isValid() || hdr.lg_ctrl.isValid()) {
                feedback.apply(hdr, meta, standard_metadata);
            }
        }

        if ((recirc && kind == KIND_RXBUF) || (!recirc && hdr.lg_data.isValid())) {
            receiver.apply(hdr, meta, standard_metadata);
        } else if (recirc && kind == KIND_TXCOPY) {
            tx_copy.apply(hdr, meta, standard_metadata);
        } else if (recirc && (kind == KIND_NOTIFY || kind == KIND_PAUSE
                              || kind == KIND_RESUME)) {
            /* A receiver control frame back from the recirculation port: out at top priority. */
            standard_metadata.egress_spec = meta.lg.port;
            standard_metadata.priority = meta.g.prio_high;
        } else if (recirc && kind != KIND_HELD) {
            meta.l.drop = 1;
        } else if (!recirc && hdr.ethernet.ether_type == ETHERTYPE_LG
                   && !hdr.lg_next.isValid()) {
            /* Explicit ACK, loss notification, pause/resume: consumed here. */
            meta.l.drop = 1;
        } else if (!recirc) {
            meta.l.deliver = 1;
        }

        if (meta.l.deliver == 1 && meta.l.drop == 0) {
            /* Leave the protected link: strip the LG shim and forward. */
            if (hdr.lg_next.isValid()) { hdr.ethernet.ether_type = hdr.lg_next.ether_type; }
            hdr.lg_data.setInvalid();
            hdr.lg_ack.setInvalid();
            hdr.lg_loss.setInvalid();
            hdr.lg_ctrl.setInvalid();
            hdr.lg_next.setInvalid();
            meta.lg.kind = KIND_NONE;
            lg_cnt_d.count((bit<32>)meta.lg.port);
            forwarding.apply(hdr, meta, standard_metadata);
            standard_metadata.priority = meta.g.prio_normal;
            if (standard_metadata.mcast_grp == 0 && standard_metadata.egress_spec != 511) {
                lg_cnt_a.count((bit<32>)standard_metadata.egress_spec);
            }
        }
        bool unicast_out = meta.l.deliver == 1 && meta.l.drop == 0
                           && standard_metadata.mcast_grp == 0
                           && standard_metadata.egress_spec != 511;
        if (unicast_out) { out_cfg.apply(standard_metadata.egress_spec, meta.oc); }
        if (unicast_out || (recirc && kind == KIND_HELD)) {
            hold.apply(hdr, meta, standard_metadata);
        }

        if (meta.l.drop == 1) { mark_to_drop(standard_metadata); }
        if (meta.l.do_clone == 1) {
            clone_preserving_field_list(CloneType.I2E, meta.l.clone_session, LG_FIELD_LIST);
        }
    }
}

control LgEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    LgTxBufAdd() tx_buf_add;
    LgTxEgress() sender;
    LgRxEgress() receiver;
    LgEcn() ecn;
    LgCorruption() corruption;
    LgGlobalConfig() global_cfg;
    LgPortConfig() port_cfg;

    apply {
        if (standard_metadata.instance_type == INSTANCE_INGRESS_CLONE
            || standard_metadata.instance_type == INSTANCE_EGRESS_CLONE) {
            meta.lg.kind = meta.lg.clone_kind;
        }
        meta.lg.clone_kind = KIND_NONE;
        meta.l.drop = 0;
        meta.l.trunc_len = 0;
        meta.l.e2e_clone = 0;
        global_cfg.apply(meta.g);
        lg_kind_t kind = meta.lg.kind;
        bool just_cloned = standard_metadata.instance_type == INSTANCE_INGRESS_CLONE;
        bool loops = kind == KIND_TXCOPY || kind == KIND_RXBUF || kind == KIND_HELD
                     || (just_cloned && (kind == KIND_NOTIFY || kind == KIND_PAUSE
                                         || kind == KIND_RESUME));
        if (loops && (standard_metadata.egress_port == meta.g.recirc_port
                      || standard_metadata.egress_port == meta.g.loop_port)) {
            if (kind == KIND_TXCOPY
                && standard_metadata.instance_type == INSTANCE_EGRESS_CLONE) {
                /* A new Tx-buffer copy: account for it, drop any piggybacked ACK. */
                tx_buf_add.apply(meta.lg.port, meta.lg.buf_len);
                meta.lg.first_pass = 1;
                hdr.lg_data.more = 0;
                hdr.lg_ack.setInvalid();
            }
            meta.lg.now = standard_metadata.egress_global_timestamp;
            recirculate_preserving_field_list(LG_FIELD_LIST);
            return;
        }

        port_cfg.apply(standard_metadata.egress_port, meta.ec);
        sender.apply(hdr, meta, standard_metadata);
        receiver.apply(hdr, meta, standard_metadata);
        if (meta.l.drop == 0) {
            ecn.apply(hdr, meta, standard_metadata);
            lg_cnt_b.count((bit<32>)standard_metadata.egress_port);
            corruption.apply(hdr, meta, standard_metadata);
        }
        if (meta.l.e2e_clone == 1) {
            clone_preserving_field_list(CloneType.E2E, meta.l.e2e_session, LG_FIELD_LIST);
        }
        if (meta.l.drop == 1) {
            mark_to_drop(standard_metadata);
        } else if (meta.l.trunc_len != 0) {
            truncate(meta.l.trunc_len);
        }
    }
}

V1Switch(LgParser(), LgVerifyChecksum(), LgIngress(), LgEgress(), LgComputeChecksum(),
         LgDeparser()) main;
