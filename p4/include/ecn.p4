/* ECN: mark CE on ECN-capable IPv4 packets that found the egress queue above a threshold; and
 * the largest queue depth seen per port (lg_qdepth_max). */
#ifndef LG_ECN_P4
#define LG_ECN_P4

control LgEcn(inout headers_t hdr, inout metadata_t meta,
              inout standard_metadata_t standard_metadata) {
    apply {
        bit<32> deepest;
        lg_qdepth_max.read(deepest, (bit<32>)standard_metadata.egress_port);
        if ((bit<32>)standard_metadata.enq_qdepth > deepest) {
            lg_qdepth_max.write((bit<32>)standard_metadata.egress_port,
                                (bit<32>)standard_metadata.enq_qdepth);
        }
        if (!hdr.ipv4.isValid() || hdr.ipv4.ecn == 0) { return; }
        bit<19> threshold = meta.ec.ecn_qdepth;
        if (threshold != 0 && standard_metadata.enq_qdepth >= threshold) {
            hdr.ipv4.ecn = 3;
        }
    }
}

#endif
