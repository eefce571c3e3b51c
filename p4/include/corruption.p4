/* Corruption emulator: drops frames leaving a port with probability p, after LG's header. */
#ifndef LG_CORRUPTION_P4
#define LG_CORRUPTION_P4

control LgCorruption(inout headers_t hdr, inout metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    apply {
        bit<32> pidx = (bit<32>)standard_metadata.egress_port;
        bit<32> threshold = meta.ec.drop_threshold;
        if (threshold == 0) { return; }
        bit<32> draw;
        random(draw, 32w1, 32w0xFFFFFFFF);
        if (draw <= threshold) {
            meta.l.drop = 1;
            lg_cnt_corrupt_drops.count(pidx);
        }
    }
}

#endif
