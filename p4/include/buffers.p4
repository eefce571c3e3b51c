/* Tx/Rx buffer occupancy bookkeeping (current and maximum) and the hole bitmaps' helpers. */
#ifndef LG_BUFFERS_P4
#define LG_BUFFERS_P4

/* Serial-number order on 17-bit (era, seq_no): a < b when b is ahead by less than 2^16. */
bool lg_seq_lt(in bit<17> a, in bit<17> b) {
    bit<17> d = b - a;
    return d != 0 && d[16:16] == 0;
}

/* b lies within LG_SEQ_WINDOW sequence numbers of a, ahead or behind (17-bit serial). */
bool lg_seq_near(in bit<17> a, in bit<17> b) {
    return b - a < LG_SEQ_WINDOW || a - b <= LG_SEQ_WINDOW;
}

/* Word index of a sequence number in a port's slice of a hole bitmap (4096 seqs per port). */
bit<32> lg_hole_word(in bit<9> port, in bit<7> word) {
    return (bit<32>)(port ++ word);
}

control LgTxBufAdd(in bit<9> port, in bit<16> len) {
    apply {
        bit<32> bytes;
        bit<32> pkts;
        bit<32> max_bytes;
        bit<32> max_pkts;
        lg_tx_buf_bytes.read(bytes, (bit<32>)port);
        lg_tx_buf_pkts.read(pkts, (bit<32>)port);
        bytes = bytes + (bit<32>)len;
        pkts = pkts + 1;
        lg_tx_buf_bytes.write((bit<32>)port, bytes);
        lg_tx_buf_pkts.write((bit<32>)port, pkts);
        lg_tx_buf_max_bytes.read(max_bytes, (bit<32>)port);
        lg_tx_buf_max_pkts.read(max_pkts, (bit<32>)port);
        if (bytes > max_bytes) { lg_tx_buf_max_bytes.write((bit<32>)port, bytes); }
        if (pkts > max_pkts) { lg_tx_buf_max_pkts.write((bit<32>)port, pkts); }
    }
}

control LgTxBufRemove(in bit<9> port, in bit<16> len) {
    apply {
        bit<32> bytes;
        bit<32> pkts;
        lg_tx_buf_bytes.read(bytes, (bit<32>)port);
        lg_tx_buf_pkts.read(pkts, (bit<32>)port);
        /* Saturating subtractions, not ifs: one action, atomic on BMv2, where ingress
         * removes while egress (at the recirculation port) adds. */
        bytes = bytes |-| (bit<32>)len;
        pkts = pkts |-| 1;
        lg_tx_buf_bytes.write((bit<32>)port, bytes);
        lg_tx_buf_pkts.write((bit<32>)port, pkts);
    }
}

control LgRxBufAdd(in bit<9> port, in bit<16> len) {
    apply {
        bit<32> bytes;
        bit<32> pkts;
        bit<32> max_bytes;
        bit<32> max_pkts;
        lg_rx_buf_bytes.read(bytes, (bit<32>)port);
        lg_rx_buf_pkts.read(pkts, (bit<32>)port);
        bytes = bytes + (bit<32>)len;
        pkts = pkts + 1;
        lg_rx_buf_bytes.write((bit<32>)port, bytes);
        lg_rx_buf_pkts.write((bit<32>)port, pkts);
        lg_rx_buf_max_bytes.read(max_bytes, (bit<32>)port);
        lg_rx_buf_max_pkts.read(max_pkts, (bit<32>)port);
        if (bytes > max_bytes) { lg_rx_buf_max_bytes.write((bit<32>)port, bytes); }
        if (pkts > max_pkts) { lg_rx_buf_max_pkts.write((bit<32>)port, pkts); }
    }
}

control LgRxBufRemove(in bit<9> port, in bit<16> len) {
    apply {
        bit<32> bytes;
        bit<32> pkts;
        lg_rx_buf_bytes.read(bytes, (bit<32>)port);
        lg_rx_buf_pkts.read(pkts, (bit<32>)port);
        /* Saturating subtractions, not ifs: one action, atomic on BMv2, where ingress
         * removes while egress (at the recirculation port) adds. */
        bytes = bytes |-| (bit<32>)len;
        pkts = pkts |-| 1;
        lg_rx_buf_bytes.write((bit<32>)port, bytes);
        lg_rx_buf_pkts.write((bit<32>)port, pkts);
    }
}

#endif
