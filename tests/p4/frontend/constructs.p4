/* Every construct of the lgkit P4 subset, in one v1model program (frontend test). */
#include <core.p4>
#include <v1model.p4>

#define ETH_IPV4 0x0800
#define MAX_PORT(x) ((x) + 9w1)
#ifdef NOT_DEFINED
#error "must not be seen"
#elif 1
const bit<8> FROM_ELIF = 8w0b1010_1010;
#else
#error "must not be seen either"
#endif

typedef bit<48> mac_t;
type bit<32> ip_t;
const int BIG = 1_000;
const bit<16> TYPE_IPV4 = ETH_IPV4;
const int<8> NEG = -8s3;
const bit<8> OCT = 0o17;
const bit<32> SHIFTED = 32w1 << 4;
const bool FLAG = true && !false;

error { BadVersion, TooManyOptions }

enum Color { Red, Green, Blue }
enum bit<8> Proto { TCP = 6, UDP = 17, ICMP = 0x1 }

header ethernet_t {
    mac_t dst;
    mac_t src;
    bit<16> etherType;
}

header vlan_t {
    bit<3> pcp;
    bit<1> cfi;
    bit<12> vid;
    bit<16> etherType;
}

@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    bit<7> pad;
}

header ipv4_t {
    bit<4> version;
    bit<4> ihl;
    bit<8> tos;
    bit<16> len;
    bit<16> id;
    bit<3> flags;
    bit<13> frag;
    bit<8> ttl;
    Proto proto;
    bit<16> csum;
    bit<32> src;
    bit<32> dst;
}

header opt_t {
    varbit<320> data;
}

header udp_t { bit<16> sport; bit<16> dport; bit<16> len; bit<16> csum; }
header tcp_t { bit<16> sport; bit<16> dport; bit<32> seq; }

header_union l4_t {
    udp_t udp;
    tcp_t tcp;
}

struct headers_t {
    packet_in_t pin;
    ethernet_t eth;
    vlan_t[2] vlans;
    ipv4_t ipv4;
    opt_t opts;
    l4_t l4;
}

struct digest_t {
    mac_t src;
    bit<9> port;
}

struct meta_t {
    @field_list(1, 2)
    bit<16> l4_ports;
    @field_list(1)
    bit<8> color_code;
    bit<32> hash_val;
    bit<2> meter_color;
    bit<8> counter;
    bool is_ok;
    tuple<bit<8>, bool> pair;
    Color color;
    int<16> signed_val;
    bit<32> reg_val;
}

bit<16> add_one(in bit<16> x) {
    return x + 1;
}

bit<8> clamp(in bit<8> v, in bit<8> hi = 8w100) {
    if (v > hi) {
        return hi;
    }
    return v;
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    bit<8> scratch = 0;

    state start {
        transition select(sm.ingress_port, pkt.lookahead<bit<8>>()) {
            (9w64, _): parse_pin;
            (_, 8w0 &&& 8w0x80): parse_eth;
            (_, 8w0x80 .. 8w0xFF): parse_eth;
            default: reject;
        }
    }

    state parse_pin {
        pkt.extract(hdr.pin);
        transition parse_eth;
    }

    state parse_eth {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.etherType) {
            0x8100: parse_vlan;
            TYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }

    state parse_vlan {
        pkt.extract(hdr.vlans.next);
        transition select(hdr.vlans.last.etherType) {
            0x8100: parse_vlan;
            TYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }

    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        verify(hdr.ipv4.version == 4, error.BadVersion);
        verify(hdr.ipv4.ihl >= 5, error.TooManyOptions);
        pkt.extract(hdr.opts, (bit<32>)(hdr.ipv4.ihl - 5) * 32);
        transition select(hdr.ipv4.proto) {
            Proto.UDP: parse_udp;
            Proto.TCP: parse_tcp;
            default: accept;
        }
    }

    state parse_udp {
        pkt.extract(hdr.l4.udp);
        pkt.advance(0);
        transition accept;
    }

    state parse_tcp {
        pkt.extract(hdr.l4.tcp);
        scratch = scratch + 1;
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout meta_t meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.tos, hdr.ipv4.len, hdr.ipv4.id,
              hdr.ipv4.flags, hdr.ipv4.frag, hdr.ipv4.ttl, hdr.ipv4.proto, hdr.ipv4.src,
              hdr.ipv4.dst },
            hdr.ipv4.csum, HashAlgorithm.csum16);
    }
}

control Counting(inout meta_t meta, in bit<9> port) {
    counter(512, CounterType.packets_and_bytes) port_counter;
    apply {
        port_counter.count((bit<32>)port);
        meta.counter = meta.counter |+| 1;
    }
}

control MyIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<32>>(1024) reg;
    register<bit<8>>(16) small_reg;
    direct_counter(CounterType.packets) fwd_counter;
    direct_meter<bit<2>>(MeterType.bytes) fwd_meter;
    meter(64, MeterType.packets) port_meter;
    Counting() counting;
    bit<32> tmp;

    @name(".drop_it") action drop() {
        mark_to_drop(sm);
    }

    action forward(bit<9> port, @name("new_mac") mac_t dst) {
        sm.egress_spec = port;
        hdr.eth.dst = dst;
        fwd_meter.read(meta.meter_color);
    }

    action set_color(Color c) {
        meta.color = c;
    }

    action count_only(inout bit<8> cnt) {
        cnt = cnt + 1;
    }

    @id(0x01000042) @priority(5)
    action to_cpu() {
        sm.egress_spec = 9w64;
        hdr.pin.setValid();
        hdr.pin.ingress_port = sm.ingress_port;
        hdr.pin.pad = 0;
    }

    table fwd {
        key = {
            hdr.eth.dst: exact @name("dst_mac");
            hdr.ipv4.dst: lpm;
            hdr.ipv4.proto: ternary;
            sm.ingress_port: range;
            hdr.vlans[0].vid: optional;
        }
        actions = {
            forward;
            drop;
            @defaultonly NoAction;
            @tableonly to_cpu;
        }
        const default_action = NoAction();
        counters = fwd_counter;
        meters = fwd_meter;
        size = BIG;
        support_timeout = true;
    }

    table acl {
        key = {
            hdr.ipv4.src: ternary;
            hdr.ipv4.proto: exact;
        }
        actions = { drop; forward; NoAction; }
        const entries = {
            priority = 10: (32w0x0A000000 &&& 32w0xFF000000, Proto.TCP) : drop();
            priority = 20: (_, Proto.UDP) : forward(9w2, 48w0xAABBCCDDEEFF);
            (32w0x0B000001, Proto.ICMP) : NoAction();
        }
        default_action = forward(1, 0);
    }

    table by_color {
        key = { meta.color: exact; }
        actions = { set_color; count_only(meta.counter); NoAction; }
        entries = {
            Color.Red : set_color(Color.Blue);
        }
        default_action = NoAction;
    }

    apply {
        bit<8> local_val = 8w255;
        bit<16> wide;
        int<16> s = -16s2;
        meta.signed_val = s |-| 16s1;
        wide = local_val ++ 8w0;
        wide = wide >> 2;
        wide = (wide << 1) ^ (bit<16>)local_val & 0xFF00 | ~wide;
        wide = add_one(wide) * 3 - 2 / 1 % 7;
        local_val = clamp(local_val);
        local_val = clamp(v = local_val, hi = 8w20);
        meta.l4_ports = hdr.l4.udp.isValid() ? hdr.l4.udp.sport : 16w0;
        meta.is_ok = (bool)1w1 && (local_val[7:4] == 4w0xF) || local_val != 0;
        meta.pair = { local_val, true };
        meta.color_code = (bit<8>)hdr.ipv4.proto;
        hdr.ipv4.proto = (Proto)8w17;
        tmp = (bit<32>)hdr.ipv4.ttl;
        hash(meta.hash_val, HashAlgorithm.crc32, 32w0, { hdr.ipv4.src, hdr.ipv4.dst }, 32w1024);
        hash(meta.hash_val, HashAlgorithm.crc16_custom, (bit<16>)0, { hdr.eth.src }, (bit<32>)65536);
        random(meta.counter, 8w1, 8w10);
        reg.read(meta.reg_val, 5);
        reg.write((bit<32>)sm.ingress_port, meta.reg_val + 1);
        small_reg.write(0, local_val);
        port_meter.execute_meter((bit<32>)sm.ingress_port, meta.meter_color);
        counting.apply(meta, sm.ingress_port);
        if (hdr.vlans[0].isValid() && hdr.vlans.size == 2) {
            hdr.vlans.pop_front(1);
        } else if (!hdr.vlans[1].isValid()) {
            hdr.vlans.push_front(1);
            hdr.vlans[0].setValid();
            hdr.vlans[0].vid = 12w7;
            hdr.vlans[0].etherType = hdr.eth.etherType;
        }
        switch (fwd.apply().action_run) {
            forward: {
                digest<digest_t>(1, { hdr.eth.src, sm.ingress_port });
            }
            drop:
            to_cpu: {
                exit;
            }
            default: { }
        }
        if (acl.apply().hit) {
            clone(CloneType.I2E, 32w100);
        } else if (by_color.apply().miss) {
            clone_preserving_field_list(CloneType.I2E, 100, 1);
        }
        switch (meta.color_code) {
            1: { resubmit_preserving_field_list(1); }
            2: { recirculate_preserving_field_list(2); }
            default: { return; }
        }
        switch (meta.color) {
            Color.Red: { log_msg("red"); }
            Color.Green: { log_msg("port {} count {}", { sm.ingress_port, meta.counter }); }
        }
        assert(meta.counter != 0);
        assume(hdr.eth.isValid());
        truncate(64);
        hdr.l4.tcp.setInvalid();
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (sm.instance_type == 1) {
            hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        }
        bit<8> proto_number = hdr.ipv4.proto;
        if (hdr.ipv4.proto == 6 || proto_number == Proto.UDP) {
            hdr.ipv4.tos = hdr.ipv4.proto ++ 8w0 == 16w0 ? 8w1 : 8w0;
        }
    }
}

control MyComputeChecksum(inout headers_t hdr, inout meta_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.tos, hdr.ipv4.len, hdr.ipv4.id,
              hdr.ipv4.flags, hdr.ipv4.frag, hdr.ipv4.ttl, hdr.ipv4.proto, hdr.ipv4.src,
              hdr.ipv4.dst },
            hdr.ipv4.csum, HashAlgorithm.csum16);
        update_checksum_with_payload(hdr.l4.udp.isValid(),
            { hdr.ipv4.src, hdr.ipv4.dst, 8w0, hdr.ipv4.proto, hdr.l4.udp.len,
              hdr.l4.udp.sport, hdr.l4.udp.dport, hdr.l4.udp.len },
            hdr.l4.udp.csum, HashAlgorithm.csum16);
    }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.pin);
        pkt.emit(hdr.eth);
        pkt.emit(hdr.vlans);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.opts);
        pkt.emit(hdr.l4);
    }
}

V1Switch<headers_t, meta_t>(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
                            MyComputeChecksum(), MyDeparser()) main;
