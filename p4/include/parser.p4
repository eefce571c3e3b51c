/* Parser, deparser and IPv4 checksum controls. */
#ifndef LG_PARSER_P4
#define LG_PARSER_P4

parser LgParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_LG: parse_lg;
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }

    state parse_lg {
        transition select(packet.lookahead<lg_type_t>()) {
            LG_TYPE_DATA: parse_lg_data;
            LG_TYPE_CTRL: parse_lg_ctrl;
            default: parse_lg_ack;
        }
    }

    state parse_lg_data {
        packet.extract(hdr.lg_data);
        transition select(hdr.lg_data.more, hdr.lg_data.dummy) {
            (1, 0): parse_lg_ack;
            (1, 1): parse_lg_ack;
            (0, 1): accept;
            default: parse_lg_next;
        }
    }

    state parse_lg_ack {
        packet.extract(hdr.lg_ack);
        transition select(hdr.lg_ack.pkt_type, hdr.lg_ack.piggybacked) {
            (LG_TYPE_ACK_LOSS, 0): parse_lg_loss;
            (LG_TYPE_ACK, 1): parse_lg_next;
            default: accept;
        }
    }

    state parse_lg_loss {
        packet.extract(hdr.lg_loss);
        transition accept;
    }

    state parse_lg_ctrl {
        packet.extract(hdr.lg_ctrl);
        transition accept;
    }

    state parse_lg_next {
        packet.extract(hdr.lg_next);
        transition select(hdr.lg_next.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }

    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition accept;
    }
}

control LgDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.lg_data);
        packet.emit(hdr.lg_ack);
        packet.emit(hdr.lg_loss);
        packet.emit(hdr.lg_ctrl);
        packet.emit(hdr.lg_next);
        packet.emit(hdr.ipv4);
    }
}

control LgVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control LgComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(
            hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn,
              hdr.ipv4.total_len, hdr.ipv4.identification, hdr.ipv4.flags,
              hdr.ipv4.frag_offset, hdr.ipv4.ttl, hdr.ipv4.protocol,
              hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum,
            HashAlgorithm.csum16);
    }
}

#endif
