/* Vertigo (CoNEXT'21) for v1model: selective deflection of packets that meet a full buffer,
 * ranked by the remaining flow size the sending host writes into every packet (the flowinfo
 * option), power-of-two-choices forwarding and deflection, and rank-to-priority bands over the
 * strict-priority queues. ECMP, DRILL and DIBS are run-time settings of the same program, so
 * one build serves every scheme of the comparison (docs/vertigo.md).
 *
 * Run-time settings: the default action of `settings` (modes, per-port buffer in packets,
 * push-out headroom, hash seed), `routes` (destination -> up to 4 candidate ports),
 * `deflect_ports` (up to 8 ports a packet may be deflected to) and `rank_band` (rank ranges ->
 * priority band; the highest band is served first).
 *
 * Queue lengths. BMv2 tells queue depths only in egress and only of the packet's own (port,
 * priority) queue, so the program keeps its own estimates in registers: +1 per (port, band)
 * when ingress admits a packet, -1 when the packet leaves through egress, each in one action.
 * The estimates stay exact as long as the traffic manager never drops what P4 admitted: every
 * TM queue has more room than capacity + headroom (docs/vertigo.md).
 *
 * Tail push-out. Vertigo's queue pushes its largest-rank packet out when a smaller-rank packet
 * meets a full buffer, and deflects the pushed-out packet. BMv2 cannot remove a queued packet,
 * so a full port admits an arriving packet into `headroom` extra places when its band is above
 * the lowest occupied band of the port (a queued packet has a larger rank); strict priority
 * then serves it before the larger-rank packets, as push-out would have. Packets of the lowest
 * occupied band are deflected instead. The difference: the larger-rank packet waits in the
 * headroom instead of being deflected (docs/vertigo.md). */
#include <core.p4>
#include <v1model.p4>
#include "include/fabric_headers.p4"

#define PORTS 512
#define BANDS 8

const bit<8> FLOWINFO_TYPE = 0x5E;  /* IPv4 option: copy 0, class 2, number 30 (RFC 4727) */

const bit<2> FORWARD_ECMP = 0;   /* hash of the 5-tuple over the candidates */
const bit<2> FORWARD_P2C = 1;    /* Vertigo: the less loaded of two random candidates */
const bit<2> FORWARD_DRILL = 2;  /* DRILL(2,1): two random candidates and the last choice */
const bit<2> DEFLECT_NONE = 0;   /* a full port drops */
const bit<2> DEFLECT_RANDOM = 1; /* DIBS: a random deflection port that is not full */
const bit<2> DEFLECT_P2C = 2;    /* Vertigo: the less loaded of two random deflection ports */

/* Vertigo's flowinfo (paper Fig. 3, as an IPv4 option), 12 bytes, checksum-neutral. */
header flowinfo_t {
    bit<8>  opt_type;     /* FLOWINFO_TYPE */
    bit<8>  opt_len;      /* 12 */
    bit<32> rfs;          /* remaining flow size in bytes, rotated right retcnt times */
    bit<4>  retcnt;       /* times the sender retransmitted this packet */
    bit<3>  flow_id;      /* tells successive flows of one connection apart */
    bit<1>  first;        /* the first packet of a flow */
    bit<8>  deflections;  /* times switches deflected this packet (ours, for measurement) */
    bit<16> seal;         /* makes the option's words sum to 0xFFFF */
    bit<16> flags;        /* top bit: the rank is the flow's age (LAS); the rest reserved */
}

struct headers_t {
    ethernet_t  ethernet;
    ipv4_t      ipv4;
    flowinfo_t  flowinfo;
    l4_ports_t  l4;
}

struct settings_t {
    bit<2>  forward;
    bit<2>  deflect;
    bit<1>  ranked;       /* 1: rank bands over the priority queues; 0: one FIFO */
    bit<16> capacity;     /* per-port buffer in packets (0: no admission control) */
    bit<16> headroom;     /* push-out places above capacity (ranked only) */
    bit<16> hash_seed;    /* per-switch ECMP seed */
}

struct metadata_t {
    settings_t cfg;
    bit<48> dmac;
    bit<8>  group;        /* route group: index of the DRILL memory */
    bit<8>  count;        /* candidates c0..c3 */
    bit<9>  c0;
    bit<9>  c1;
    bit<9>  c2;
    bit<9>  c3;
    bit<8>  dcount;       /* deflection ports d0..d7 */
    bit<9>  d0;
    bit<9>  d1;
    bit<9>  d2;
    bit<9>  d3;
    bit<9>  d4;
    bit<9>  d5;
    bit<9>  d6;
    bit<9>  d7;
    bit<32> rank;
    bit<3>  band;
    bit<1>  counted;      /* egress: this packet is in the queue-length estimates */
}

parser VertigoParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition select(hdr.ipv4.ihl, hdr.ipv4.frag_offset) {
            (IHL_PLAIN, 0): parse_l4;
            (IHL_WITH_OPTION, 0): parse_option;
            default: accept;
        }
    }
    state parse_option {
        transition select(packet.lookahead<bit<16>>()) {
            FLOWINFO_TYPE ++ OPTION_LEN: parse_flowinfo;
            default: accept;
        }
    }
    state parse_flowinfo {
        packet.extract(hdr.flowinfo);
        transition parse_l4;
    }
    state parse_l4 {
        transition select(hdr.ipv4.protocol) {
            IP_PROTO_TCP: parse_ports;
            IP_PROTO_UDP: parse_ports;
            default: accept;
        }
    }
    state parse_ports {
        packet.extract(hdr.l4);
        transition accept;
    }
}

control VertigoVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

bit<9> pick4(in bit<8> i, in bit<9> a, in bit<9> b, in bit<9> c, in bit<9> d) {
    return i == 0 ? a : (i == 1 ? b : (i == 2 ? c : d));
}

bit<9> pick8(in bit<8> i, in metadata_t m) {
    return i < 4 ? pick4(i, m.d0, m.d1, m.d2, m.d3) : pick4(i - 4, m.d4, m.d5, m.d6, m.d7);
}

/* Queue-length estimates (packets admitted by ingress and not yet through egress) and what the
 * program decided, shared by ingress and egress. */
register<bit<32>>(PORTS) vertigo_qlen;              /* per port */
register<bit<32>>(PORTS * BANDS) vertigo_qlen_band; /* per (port, band): port * 8 + band */
register<bit<32>>(PORTS) vertigo_qlen_max;          /* largest vertigo_qlen since cleared */
register<bit<9>>(256) vertigo_drill_memory;         /* DRILL: the last choice per route group */
counter(PORTS, CounterType.packets) vertigo_forwarded;  /* admitted, by egress port */
counter(PORTS, CounterType.packets) vertigo_deflected;  /* by the full port it was meant for */
counter(PORTS, CounterType.packets) vertigo_full_drops; /* port and deflection ports full */
counter(PORTS, CounterType.packets) vertigo_pushout;    /* admitted into the push-out headroom */
counter(PORTS, CounterType.packets) vertigo_ttl_drops;  /* TTL ran out (deflection loops), by ingress port */

control VertigoIngress(inout headers_t hdr, inout metadata_t meta,
                       inout standard_metadata_t standard_metadata) {
    action drop() {
        mark_to_drop(standard_metadata);
    }

    action configure(bit<2> forward, bit<2> deflect, bit<1> ranked, bit<16> capacity,
                     bit<16> headroom, bit<16> hash_seed) {
        meta.cfg.forward = forward;
        meta.cfg.deflect = deflect;
        meta.cfg.ranked = ranked;
        meta.cfg.capacity = capacity;
        meta.cfg.headroom = headroom;
        meta.cfg.hash_seed = hash_seed;
    }

    table settings {
        key = { }
        actions = { configure; }
        default_action = configure(FORWARD_ECMP, DEFLECT_NONE, 0, 0, 0, 0);
        size = 1;
    }

    action set_candidates(bit<48> dmac, bit<8> group, bit<8> count, bit<9> p0, bit<9> p1,
                          bit<9> p2, bit<9> p3) {
        meta.dmac = dmac;
        meta.group = group;
        meta.count = count;
        meta.c0 = p0;
        meta.c1 = p1;
        meta.c2 = p2;
        meta.c3 = p3;
    }

    table routes {
        key = { hdr.ipv4.dst_addr: lpm; }
        actions = { set_candidates; drop; }
        default_action = drop();
        size = 1024;
    }

    action set_deflect_ports(bit<8> count, bit<9> p0, bit<9> p1, bit<9> p2, bit<9> p3,
                             bit<9> p4, bit<9> p5, bit<9> p6, bit<9> p7) {
        meta.dcount = count;
        meta.d0 = p0;
        meta.d1 = p1;
        meta.d2 = p2;
        meta.d3 = p3;
        meta.d4 = p4;
        meta.d5 = p5;
        meta.d6 = p6;
        meta.d7 = p7;
    }

    table deflect_ports {
        key = { }
        actions = { set_deflect_ports; }
        default_action = set_deflect_ports(0, 0, 0, 0, 0, 0, 0, 0, 0);
        size = 1;
    }

    action set_band(bit<3> band) {
        meta.band = band;
    }

    table rank_band {
        key = { meta.rank: range; }
        actions = { set_band; }
        default_action = set_band(0);
        size = 64;
    }

    action occupancy(in bit<9> port, out bit<32> occ) {
        vertigo_qlen.read(occ, (bit<32>)port);
    }

    action band_occupancy(in bit<9> port, in bit<3> band, out bit<32> occ) {
        vertigo_qlen_band.read(occ, (bit<32>)port * BANDS + (bit<32>)band);
    }

    /* The +1 of an admitted packet, read and written in one action: BMv2 runs egress in other
     * threads and makes only the register operations of one action atomic, so a read here and
     * a write in a later action would lose the -1s egress makes in between, and the estimates
     * would only grow (docs/vertigo.md, "On BMv2"). */
    action count_in(in bit<9> port, in bit<3> band) {
        bit<32> slot = (bit<32>)port * BANDS + (bit<32>)band;
        bit<32> occ;
        bit<32> in_band;
        bit<32> peak;
        vertigo_qlen.read(occ, (bit<32>)port);
        vertigo_qlen_band.read(in_band, slot);
        vertigo_qlen_max.read(peak, (bit<32>)port);
        vertigo_qlen.write((bit<32>)port, occ + 1);
        vertigo_qlen_band.write(slot, in_band + 1);
        vertigo_qlen_max.write((bit<32>)port, occ + 1 > peak ? occ + 1 : peak);
    }

    action ecmp(out bit<9> port) {
        bit<8> index;
        hash(index, HashAlgorithm.crc16, 8w0,
             { hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol, hdr.l4.src_port,
               hdr.l4.dst_port, meta.cfg.hash_seed },
             meta.count);
        port = pick4(index, meta.c0, meta.c1, meta.c2, meta.c3);
    }

    action seal_flowinfo() {
        hdr.flowinfo.seal = option_seal(
            hdr.flowinfo.opt_type ++ hdr.flowinfo.opt_len, hdr.flowinfo.rfs[31:16],
            hdr.flowinfo.rfs[15:0],
            hdr.flowinfo.retcnt ++ hdr.flowinfo.flow_id ++ hdr.flowinfo.first
                ++ hdr.flowinfo.deflections,
            hdr.flowinfo.flags);
    }

    apply {
        if (!hdr.ipv4.isValid()) {
            drop();
            return;
        }
        if (hdr.ipv4.ttl <= 1) {
            vertigo_ttl_drops.count((bit<32>)standard_metadata.ingress_port);
            drop();
            return;
        }
        settings.apply();
        if (!routes.apply().hit) {
            return;
        }
        deflect_ports.apply();
        if (hdr.flowinfo.isValid()) {
            /* Boosting: each retransmission halves the rank. The host rotates the size right
             * (so that the receiver can undo it); the bits rotated in at the top are masked
             * off here, or an odd size would become the largest rank. */
            meta.rank = hdr.flowinfo.rfs & (32w0xffffffff >> hdr.flowinfo.retcnt);
        }
        if (meta.cfg.ranked == 1) {
            rank_band.apply();
        }

        /* Forwarding: one of the route's candidates. */
        bit<9> port = meta.c0;
        if (meta.count > 1) {
            if (meta.cfg.forward == FORWARD_ECMP) {
                ecmp(port);
            } else if (meta.cfg.forward == FORWARD_P2C || meta.cfg.forward == FORWARD_DRILL) {
                bit<8> i1;
                bit<8> i2;
                random(i1, 0, meta.count - 1);
                random(i2, 0, meta.count - 1);
                bit<9> p2 = pick4(i2, meta.c0, meta.c1, meta.c2, meta.c3);
                bit<32> best;
                bit<32> other;
                port = pick4(i1, meta.c0, meta.c1, meta.c2, meta.c3);
                occupancy(port, best);
                occupancy(p2, other);
                if (other < best) {
                    port = p2;
                    best = other;
                }
                if (meta.cfg.forward == FORWARD_DRILL) {
                    bit<9> last;
                    vertigo_drill_memory.read(last, (bit<32>)meta.group);
                    if (last != 0 && (last == meta.c0 || last == meta.c1 || last == meta.c2
                                      || last == meta.c3)) {
                        occupancy(last, other);
                        if (other < best) {
                            port = last;
                        }
                    }
                    vertigo_drill_memory.write((bit<32>)meta.group, port);
                }
            }
        }

        /* Admission: a full port admits into the push-out headroom, deflects, or drops. */
        bit<32> capacity = (bit<32>)meta.cfg.capacity;
        bit<32> occ;
        occupancy(port, occ);
        if (capacity != 0 && occ >= capacity) {
            bool admit = false;
            if (meta.cfg.ranked == 1 && occ < capacity + (bit<32>)meta.cfg.headroom) {
                /* Some queued packet has a larger rank iff a band below ours holds packets. */
                bit<32> below = 0;
                bit<32> b;
                if (meta.band > 0) { band_occupancy(port, 0, b); below = below + b; }
                if (meta.band > 1) { band_occupancy(port, 1, b); below = below + b; }
                if (meta.band > 2) { band_occupancy(port, 2, b); below = below + b; }
                if (meta.band > 3) { band_occupancy(port, 3, b); below = below + b; }
                if (meta.band > 4) { band_occupancy(port, 4, b); below = below + b; }
                if (meta.band > 5) { band_occupancy(port, 5, b); below = below + b; }
                if (meta.band > 6) { band_occupancy(port, 6, b); below = below + b; }
                if (below != 0) {
                    admit = true;
                    vertigo_pushout.count((bit<32>)port);
                }
            }
            if (!admit) {
                bit<9> full = port;
                port = 0;
                if (meta.cfg.deflect == DEFLECT_P2C && meta.dcount != 0) {
                    bit<8> j1;
                    bit<8> j2;
                    random(j1, 0, meta.dcount - 1);
                    random(j2, 0, meta.dcount - 1);
                    bit<9> q1 = pick8(j1, meta);
                    bit<9> q2 = pick8(j2, meta);
                    bit<32> o1;
                    bit<32> o2;
                    occupancy(q1, o1);
                    occupancy(q2, o2);
                    if (o2 < o1) {
                        q1 = q2;
                        o1 = o2;
                    }
                    if (o1 < capacity) {
                        port = q1;
                    }
                } else if (meta.cfg.deflect == DEFLECT_RANDOM && meta.dcount != 0) {
                    /* DIBS: a port chosen at random among the deflection ports not full. */
                    bit<8> free = 0;
                    bit<8> mask = 0;
                    bit<32> o;
                    if (meta.dcount > 0) { occupancy(meta.d0, o); if (o < capacity) { mask[0:0] = 1; free = free + 1; } }
                    if (meta.dcount > 1) { occupancy(meta.d1, o); if (o < capacity) { mask[1:1] = 1; free = free + 1; } }
                    if (meta.dcount > 2) { occupancy(meta.d2, o); if (o < capacity) { mask[2:2] = 1; free = free + 1; } }
                    if (meta.dcount > 3) { occupancy(meta.d3, o); if (o < capacity) { mask[3:3] = 1; free = free + 1; } }
                    if (meta.dcount > 4) { occupancy(meta.d4, o); if (o < capacity) { mask[4:4] = 1; free = free + 1; } }
                    if (meta.dcount > 5) { occupancy(meta.d5, o); if (o < capacity) { mask[5:5] = 1; free = free + 1; } }
                    if (meta.dcount > 6) { occupancy(meta.d6, o); if (o < capacity) { mask[6:6] = 1; free = free + 1; } }
                    if (meta.dcount > 7) { occupancy(meta.d7, o); if (o < capacity) { mask[7:7] = 1; free = free + 1; } }
                    if (free != 0) {
                        bit<8> k;
                        random(k, 0, free - 1);
                        /* the k-th free port: k counts down through the free ones */
                        if (mask[0:0] == 1) { if (k == 0) { port = meta.d0; } k = k - 1; }
                        if (mask[1:1] == 1) { if (k == 0) { port = meta.d1; } k = k - 1; }
                        if (mask[2:2] == 1) { if (k == 0) { port = meta.d2; } k = k - 1; }
                        if (mask[3:3] == 1) { if (k == 0) { port = meta.d3; } k = k - 1; }
                        if (mask[4:4] == 1) { if (k == 0) { port = meta.d4; } k = k - 1; }
                        if (mask[5:5] == 1) { if (k == 0) { port = meta.d5; } k = k - 1; }
                        if (mask[6:6] == 1) { if (k == 0) { port = meta.d6; } k = k - 1; }
                        if (mask[7:7] == 1) { if (k == 0) { port = meta.d7; } }
                    }
                }
                if (port == 0) {
                    vertigo_full_drops.count((bit<32>)full);
                    drop();
                    return;
                }
                vertigo_deflected.count((bit<32>)full);
                if (hdr.flowinfo.isValid()) {
                    hdr.flowinfo.deflections = hdr.flowinfo.deflections |+| 1;
                    seal_flowinfo();
                }
            }
        }

        /* Enqueue: count the packet into its port and band. */
        count_in(port, meta.band);
        vertigo_forwarded.count((bit<32>)port);
        meta.counted = 1;
        standard_metadata.egress_spec = port;
        standard_metadata.priority = meta.band;
        hdr.ethernet.src_addr = hdr.ethernet.dst_addr;
        hdr.ethernet.dst_addr = meta.dmac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }
}

/* A packet leaving the queue leaves the estimates (the correction of ingress's +1). */
control VertigoEgress(inout headers_t hdr, inout metadata_t meta,
                      inout standard_metadata_t standard_metadata) {
    apply {
        if (meta.counted == 1) {
            bit<32> port = (bit<32>)standard_metadata.egress_port;
            bit<32> slot = port * BANDS + (bit<32>)meta.band;
            bit<32> occ;
            bit<32> in_band;
            vertigo_qlen.read(occ, port);
            vertigo_qlen_band.read(in_band, slot);
            vertigo_qlen.write(port, occ |-| 1);
            vertigo_qlen_band.write(slot, in_band |-| 1);
        }
    }
}

control VertigoComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
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

control VertigoDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.flowinfo);
        packet.emit(hdr.l4);
    }
}

V1Switch(VertigoParser(), VertigoVerifyChecksum(), VertigoIngress(), VertigoEgress(),
         VertigoComputeChecksum(), VertigoDeparser()) main;
