/* TNA parsers and deparsers: loop and timer packets recognised by port (parser value sets the
 * control plane fills), the LG headers as in p4/include/parser.p4, IPv4 checksum at egress. */
#ifndef LGT_PARSER_P4
#define LGT_PARSER_P4

parser LgLinkParser(packet_in pkt, inout headers_t hdr) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_LG: parse_lg;
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }

    state parse_lg {
        transition select(pkt.lookahead<lg_type_t>()) {
            LG_TYPE_DATA: parse_lg_data;
            LG_TYPE_CTRL: parse_lg_ctrl;
            default: parse_lg_ack;
        }
    }

    state parse_lg_data {
        pkt.extract(hdr.lg_data);
        transition select(hdr.lg_data.more, hdr.lg_data.dummy) {
            (1, _): parse_lg_ack;
            (0, 1): accept;
            default: parse_lg_next;
        }
    }

    state parse_lg_ack {
        pkt.extract(hdr.lg_ack);
        transition select(hdr.lg_ack.pkt_type, hdr.lg_ack.piggybacked) {
            (LG_TYPE_ACK_LOSS, 0): parse_lg_loss;
            (LG_TYPE_ACK, 1): parse_lg_next;
            default: accept;
        }
    }

    state parse_lg_loss {
        pkt.extract(hdr.lg_loss);
        transition accept;
    }

    state parse_lg_ctrl {
        pkt.extract(hdr.lg_ctrl);
        transition accept;
    }

    state parse_lg_next {
        pkt.extract(hdr.lg_next);
        transition select(hdr.lg_next.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }

    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition accept;
    }
}

parser LgIngressParser(packet_in pkt, out headers_t hdr, out ig_meta_t meta,
                       out ingress_intrinsic_metadata_t ig_intr_md) {
    LgLinkParser() link;
    /* The recirculation ports and the packet generator's ports (control plane). */
    value_set<bit<9>>(4) lg_loop_ports;
    value_set<bit<9>>(4) lg_pktgen_ports;

    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        meta.looped = 0;
        meta.txcopy = 0;
        meta.in_first_pass = 0;
        meta.in_skip = 0;
        meta.in_buf_len = 0;
        transition select(ig_intr_md.ingress_port) {
            lg_loop_ports: parse_carry;
            lg_pktgen_ports: parse_timer;
            default: parse_port;
        }
    }

    /* The pass's protected port: the ingress port, or the one a looping packet carries. */
    state parse_port {
        meta.port = ig_intr_md.ingress_port;
        transition parse_link;
    }

    state parse_carry {
        pkt.extract(hdr.carry);
        meta.looped = 1;
        meta.port = hdr.carry.port[8:0];
        meta.in_first_pass = hdr.carry.first_pass;
        meta.in_skip = hdr.carry.skip;
        meta.in_buf_len = hdr.carry.buf_len;
        transition select(hdr.carry.kind) {
            KIND_TXCOPY: parse_txcopy;
            default: parse_link;
        }
    }

    state parse_txcopy {
        meta.txcopy = 1;
        transition parse_link;
    }

    state parse_timer {
        pkt.extract(hdr.timer);
        transition parse_link;
    }

    state parse_link {
        link.apply(pkt, hdr);
        transition accept;
    }
}

control LgIngressDeparser(packet_out pkt, inout headers_t hdr, in ig_meta_t meta,
                          in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Mirror() mirror;

    apply {
        if (ig_dprsr_md.mirror_type == 1) {
            mirror.emit<lg_carry_h>(meta.session, meta.mirror);
        }
        pkt.emit(hdr.carry);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.lg_data);
        pkt.emit(hdr.lg_ack);
        pkt.emit(hdr.lg_loss);
        pkt.emit(hdr.lg_ctrl);
        pkt.emit(hdr.lg_next);
        pkt.emit(hdr.ipv4);
    }
}

/* Every packet reaching egress starts with lg_carry_h: bridged by ingress, or a mirror header. */
parser LgEgressParser(packet_in pkt, out headers_t hdr, out eg_meta_t meta,
                      out egress_intrinsic_metadata_t eg_intr_md) {
    LgLinkParser() link;

    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.carry);
        transition select(hdr.carry.kind) {
            KIND_NOTIFY: parse_control;
            KIND_PAUSE: parse_control;
            KIND_RESUME: parse_control;
            default: parse_link;
        }
    }

    /* A control frame is built on the mirrored frame's Ethernet header alone: the mirror
     * session's max_pkt_len cuts the copy after it (lg_carry_h + 14 bytes + FCS: 34). */
    state parse_control {
        pkt.extract(hdr.ethernet);
        transition accept;
    }

    state parse_link {
        link.apply(pkt, hdr);
        transition accept;
    }
}

control LgEgressDeparser(packet_out pkt, inout headers_t hdr, in eg_meta_t meta,
                         in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Mirror() mirror;
    Checksum() ipv4_csum;

    apply {
        if (eg_dprsr_md.mirror_type == 1) {
            mirror.emit<lg_carry_h>(meta.session, meta.mirror);
        }
        if (hdr.ipv4.isValid()) {
            hdr.ipv4.hdr_checksum = ipv4_csum.update({
                hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn,
                hdr.ipv4.total_len, hdr.ipv4.identification, hdr.ipv4.flags,
                hdr.ipv4.frag_offset, hdr.ipv4.ttl, hdr.ipv4.protocol,
                hdr.ipv4.src_addr, hdr.ipv4.dst_addr });
        }
        pkt.emit(hdr.carry);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.pfc);
        pkt.emit(hdr.lg_data);
        pkt.emit(hdr.lg_ack);
        pkt.emit(hdr.lg_loss);
        pkt.emit(hdr.lg_ctrl);
        pkt.emit(hdr.lg_next);
        pkt.emit(hdr.ipv4);
    }
}

#endif
