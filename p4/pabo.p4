/* PABO (packet bounce, Shi et al.) for v1model: a switch whose output queue fills up sends a
 * packet back toward where it came from, with a probability that grows with the queue
 * (the paper's Eq. 4); the previous hop forwards it again. Bounced packets travel in the
 * highest-priority queue. Docs: docs/pabo.md.
 *
 * The bounce header is a checksum-neutral 12-byte IPv4 option (include/fabric_headers.p4): the
 * first switch adds it, the switch that delivers to a host removes it, so hosts never see it,
 * and programs that know nothing of it (p4/linkguardian.p4) forward it unchanged.
 *
 * Bounce probability. P(u, n) of Eq. 4 needs exponentials, so the control plane computes it
 * (lgkit/schemes/pabo_control.py) for every queue length u * C in packets and bounce count
 * n and installs `bounce_threshold` entries (n, queue length) -> round(P * (2^32 - 1)); the
 * data plane compares a random 32-bit number against the threshold. A queue length without an
 * entry (u <= theta) never bounces; a full queue always does (P = 1 at u = 1). Changing theta
 * or lambda at run time is rewriting that table.
 *
 * Queue lengths: per (port, queue) registers, +1 in ingress, -1 in egress, as in vertigo.p4
 * (BMv2's enq_qdepth sums the priority queues of a port). Queue 0 is the normal queue, queue 1
 * the bounce queue (the packets that have been bounced at least once).
 *
 * Where a bounce goes: a packet that arrived travelling forward goes back out of its ingress
 * port; one that arrived bounced (travelling backward) goes one hop further back, to the
 * `upstream` port toward its source. Never toward a host: a switch does not bounce what a host
 * just sent, nor send a bounce to a host port. Loop bound: at most `max_bounces` bounces per
 * packet, after which a full queue drops it. */
#include <core.p4>
#include <v1model.p4>
#include "include/fabric_headers.p4"

#define PORTS 512
#define QUEUES 2

const bit<8> BOUNCE_TYPE = 0xDE;  /* IPv4 option: copy 1, class 2, number 30 (RFC 4727) */
const bit<1> QUEUE_NORMAL = 0;
const bit<1> QUEUE_BOUNCE = 1;
const bit<8> MAX_COUNT_ROW = 15;  /* bounce counts above this share its threshold row */

/* The bounce header (the paper's bouncedHop, bouncedDistance, maxBouncedDistance, totalHop). */
header bounce_t {
    bit<8>  opt_type;      /* BOUNCE_TYPE */
    bit<8>  opt_len;       /* 12 */
    bit<8>  bounces;       /* n_p: times the packet was bounced */
    bit<8>  distance;      /* +1 per bounce, -1 per normal hop (not below 0) */
    bit<8>  max_distance;  /* the largest distance so far */
    bit<8>  total_hops;    /* switches it passed, forward and bounced */
    bit<1>  backward;      /* its last hop was a bounce */
    bit<15> reserved;
    bit<16> seal;          /* makes the option's words sum to 0xFFFF */
    bit<16> reserved2;
}

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
    bounce_t   bounce;
    l4_ports_t l4;
}

struct settings_t {
    bit<1>  enabled;         /* 0: plain ECMP forwarding with drop-tail at `capacity` */
    bit<16> capacity;        /* normal queue, packets (0: no admission control) */
    bit<16> bounce_capacity; /* bounce queue, packets */
    bit<8>  max_bounces;     /* loop bound */
    bit<3>  bounce_priority; /* priority queue of bounced packets (the highest) */
    bit<16> hash_seed;
}

struct metadata_t {
    settings_t cfg;
    bit<48> dmac;
    bit<8>  count;
    bit<9>  c0;
    bit<9>  c1;
    bit<9>  c2;
    bit<9>  c3;
    bit<1>  from_host;     /* ingress port faces a host */
    bit<9>  upstream;      /* port one hop back toward the source (0: none) */
    bit<1>  upstream_host; /* ... and it faces a host */
    bit<8>  row;           /* bounce-count row of the threshold table */
    bit<16> occupancy;     /* threshold table key: packets in the queue the packet would join */
    bit<32> threshold;
    bit<1>  queue;         /* egress: the queue the packet was counted in */
    bit<1>  counted;
}

parser PaboParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
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
            BOUNCE_TYPE ++ OPTION_LEN: parse_bounce;
            default: accept;
        }
    }
    state parse_bounce {
        packet.extract(hdr.bounce);
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

control PaboVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

bit<9> pick4(in bit<8> i, in bit<9> a, in bit<9> b, in bit<9> c, in bit<9> d) {
    return i == 0 ? a : (i == 1 ? b : (i == 2 ? c : d));
}

register<bit<32>>(PORTS * QUEUES) pabo_qlen;      /* per (port, queue): port * 2 + queue */
register<bit<32>>(PORTS * QUEUES) pabo_qlen_max;  /* largest pabo_qlen since cleared */
counter(PORTS, CounterType.packets) pabo_forwarded;   /* sent on normally, by egress port */
counter(PORTS, CounterType.packets) pabo_bounced;     /* bounced, by the port it went back out */
counter(PORTS, CounterType.packets) pabo_full_drops;  /* dropped at a full queue, by port */
counter(256, CounterType.packets) pabo_max_distance;  /* delivered packets by max_distance */
counter(256, CounterType.packets) pabo_total_hops;    /* delivered packets by total_hops */

control PaboIngress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    action drop() {
        mark_to_drop(standard_metadata);
    }

    action configure(bit<1> enabled, bit<16> capacity, bit<16> bounce_capacity,
                     bit<8> max_bounces, bit<3> bounce_priority, bit<16> hash_seed) {
        meta.cfg.enabled = enabled;
        meta.cfg.capacity = capacity;
        meta.cfg.bounce_capacity = bounce_capacity;
        meta.cfg.max_bounces = max_bounces;
        meta.cfg.bounce_priority = bounce_priority;
        meta.cfg.hash_seed = hash_seed;
    }

    table settings {
        key = { }
        actions = { configure; }
        default_action = configure(0, 0, 0, 0, 0, 0);
        size = 1;
    }

    action set_candidates(bit<48> dmac, bit<8> count, bit<9> p0, bit<9> p1, bit<9> p2,
                          bit<9> p3) {
        meta.dmac = dmac;
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

    action set_upstream(bit<9> port, bit<1> host) {
        meta.upstream = port;
        meta.upstream_host = host;
    }

    table upstream {
        key = { hdr.ipv4.src_addr: lpm; }
        actions = { set_upstream; }
        default_action = set_upstream(0, 0);
        size = 1024;
    }

    action host_port() {
        meta.from_host = 1;
    }

    table host_ports {
        key = { standard_metadata.ingress_port: exact; }
        actions = { host_port; NoAction; }
        default_action = NoAction();
        size = PORTS;
    }

    action set_threshold(bit<32> threshold) {
        meta.threshold = threshold;
    }

    table bounce_threshold {
        key = {
            meta.row: exact;
            meta.occupancy: exact;
        }
        actions = { set_threshold; }
        default_action = set_threshold(0);
        size = 16384;
    }

    action ecmp(out bit<9> port) {
        bit<8> index;
        hash(index, HashAlgorithm.crc16, 8w0,
             { hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol, hdr.l4.src_port,
               hdr.l4.dst_port, meta.cfg.hash_seed },
             meta.count);
        port = pick4(index, meta.c0, meta.c1, meta.c2, meta.c3);
    }

    action occupancy(in bit<9> port, in bit<1> queue, out bit<32> occ) {
        pabo_qlen.read(occ, (bit<32>)port * QUEUES + (bit<32>)queue);
    }

    action seal_bounce() {
        hdr.bounce.seal = option_seal(
            hdr.bounce.opt_type ++ hdr.bounce.opt_len, hdr.bounce.bounces ++ hdr.bounce.distance,
            hdr.bounce.max_distance ++ hdr.bounce.total_hops,
            hdr.bounce.backward ++ hdr.bounce.reserved, hdr.bounce.reserved2);
    }

    action add_bounce_header() {
        hdr.bounce.setValid();
        hdr.bounce.opt_type = BOUNCE_TYPE;
        hdr.bounce.opt_len = OPTION_LEN;
        hdr.bounce.bounces = 0;
        hdr.bounce.distance = 0;
        hdr.bounce.max_distance = 0;
        hdr.bounce.total_hops = 0;
        hdr.bounce.backward = 0;
        hdr.bounce.reserved = 0;
        hdr.bounce.reserved2 = 0;
        hdr.ipv4.ihl = IHL_WITH_OPTION;
        hdr.ipv4.total_len = hdr.ipv4.total_len + (bit<16>)OPTION_LEN;
    }

    apply {
        if (!hdr.ipv4.isValid() || hdr.ipv4.ttl <= 1) {
            drop();
            return;
        }
        settings.apply();
        if (!routes.apply().hit) {
            return;
        }
        host_ports.apply();
        bit<9> port = meta.c0;
        if (meta.count > 1) {
            ecmp(port);
        }
        bit<9> dest = port;
        bit<1> queue = QUEUE_NORMAL;
        bit<32> occ;
        occupancy(port, queue, occ);
        bit<32> capacity = (bit<32>)meta.cfg.capacity;

        if (meta.cfg.enabled == 1 && !hdr.bounce.isValid() && hdr.ipv4.ihl == IHL_PLAIN) {
            add_bounce_header();
        }
        if (meta.cfg.enabled == 1 && hdr.bounce.isValid()) {
            hdr.bounce.total_hops = hdr.bounce.total_hops |+| 1;
            if (hdr.bounce.bounces != 0) {
                queue = QUEUE_BOUNCE;
                capacity = (bit<32>)meta.cfg.bounce_capacity;
                occupancy(port, queue, occ);
            }
            bool bounce = false;
            if (meta.from_host == 0 && hdr.bounce.bounces < meta.cfg.max_bounces) {
                if (occ >= capacity) {
                    bounce = true;
                } else {
                    meta.row = hdr.bounce.bounces > MAX_COUNT_ROW ? MAX_COUNT_ROW
                                                                   : hdr.bounce.bounces;
                    meta.occupancy = occ > 0xffff ? 16w0xffff : occ[15:0];
                    bounce_threshold.apply();
                    bit<32> r;
                    random(r, 0, 32w0xfffffffe);
                    bounce = r < meta.threshold;
                }
            }
            if (bounce) {
                /* Back where it came from; one hop further back if it came bounced. */
                bit<9> back = standard_metadata.ingress_port;
                if (hdr.bounce.backward == 1) {
                    upstream.apply();
                    back = meta.upstream_host == 1 ? 9w0 : meta.upstream;
                }
                if (back != 0) {
                    dest = back;
                    queue = QUEUE_BOUNCE;
                    capacity = (bit<32>)meta.cfg.bounce_capacity;
                    occupancy(dest, queue, occ);
                    hdr.bounce.bounces = hdr.bounce.bounces |+| 1;
                    hdr.bounce.distance = hdr.bounce.distance |+| 1;
                    if (hdr.bounce.distance > hdr.bounce.max_distance) {
                        hdr.bounce.max_distance = hdr.bounce.distance;
                    }
                    hdr.bounce.backward = 1;
                } else {
                    bounce = false;
                }
            }
            if (!bounce) {
                hdr.bounce.distance = hdr.bounce.distance |-| 1;
                hdr.bounce.backward = 0;
            }
            seal_bounce();
            if (bounce) {
                pabo_bounced.count((bit<32>)dest);
            }
        }

        if (capacity != 0 && occ >= capacity) {
            pabo_full_drops.count((bit<32>)dest);
            drop();
            return;
        }
        bit<32> slot = (bit<32>)dest * QUEUES + (bit<32>)queue;
        pabo_qlen.write(slot, occ + 1);
        bit<32> peak;
        pabo_qlen_max.read(peak, slot);
        if (occ + 1 > peak) {
            pabo_qlen_max.write(slot, occ + 1);
        }
        meta.queue = queue;
        meta.counted = 1;
        standard_metadata.egress_spec = dest;
        if (queue == QUEUE_BOUNCE) {
            standard_metadata.priority = meta.cfg.bounce_priority;
        }
        if (dest == port) {
            pabo_forwarded.count((bit<32>)dest);
            hdr.ethernet.src_addr = hdr.ethernet.dst_addr;
            hdr.ethernet.dst_addr = meta.dmac;
            hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        }
    }
}

/* Leaving: out of the estimates; toward a host, the statistics of the delivered packet are
 * counted and the bounce header removed. */
control PaboEgress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    bit<1> to_host = 0;

    action host_port() {
        to_host = 1;
    }

    table host_ports {
        key = { standard_metadata.egress_port: exact; }
        actions = { host_port; NoAction; }
        default_action = NoAction();
        size = PORTS;
    }

    apply {
        if (meta.counted == 1) {
            bit<32> slot = (bit<32>)standard_metadata.egress_port * QUEUES + (bit<32>)meta.queue;
            bit<32> occ;
            pabo_qlen.read(occ, slot);
            pabo_qlen.write(slot, occ |-| 1);
        }
        host_ports.apply();
        if (to_host == 1 && hdr.bounce.isValid()) {
            pabo_max_distance.count((bit<32>)hdr.bounce.max_distance);
            pabo_total_hops.count((bit<32>)hdr.bounce.total_hops);
            hdr.bounce.setInvalid();
            hdr.ipv4.ihl = IHL_PLAIN;
            hdr.ipv4.total_len = hdr.ipv4.total_len - (bit<16>)OPTION_LEN;
        }
    }
}

control PaboComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
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

control PaboDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.bounce);
        packet.emit(hdr.l4);
    }
}

V1Switch(PaboParser(), PaboVerifyChecksum(), PaboIngress(), PaboEgress(),
         PaboComputeChecksum(), PaboDeparser()) main;
