/* Headers shared by the fabric programs vertigo.p4 and pabo.p4: Ethernet, IPv4, the first four
 * bytes of TCP/UDP (ports, for ECMP hashing), and the checksum-neutral seal of their IPv4
 * options.
 *
 * Both programs carry their per-packet state in a 12-byte IPv4 option whose 16-bit words add
 * up to 0xFFFF (ones' complement "minus zero"): such an option leaves the IPv4 header checksum
 * of the 20 fixed bytes unchanged, so every program that recomputes the checksum over the fixed
 * fields only (p4/basic.p4, p4/linkguardian.p4) still writes a correct checksum for the whole
 * header, and forwards these packets untouched. */
#ifndef FABRIC_HEADERS_P4
#define FABRIC_HEADERS_P4

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<8>  IP_PROTO_TCP = 6;
const bit<8>  IP_PROTO_UDP = 17;
const bit<4>  IHL_PLAIN = 5;        /* 20-byte IPv4 header */
const bit<4>  IHL_WITH_OPTION = 8;  /* 20 bytes + one 12-byte option */
const bit<8>  OPTION_LEN = 12;

header ethernet_t {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<6>  dscp;
    bit<2>  ecn;
    bit<16> total_len;
    bit<16> identification;
    bit<3>  flags;
    bit<13> frag_offset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdr_checksum;
    bit<32> src_addr;
    bit<32> dst_addr;
}

/* Source and destination port: the first 4 bytes of TCP and UDP. */
header l4_ports_t {
    bit<16> src_port;
    bit<16> dst_port;
}

/* The value that makes a 12-byte option checksum-neutral: the ones' complement of the sum of
 * its other five 16-bit words. */
bit<16> option_seal(in bit<16> w0, in bit<16> w1, in bit<16> w2, in bit<16> w3, in bit<16> w5) {
    bit<32> sum = (bit<32>)w0 + (bit<32>)w1 + (bit<32>)w2 + (bit<32>)w3 + (bit<32>)w5;
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    return ~sum[15:0];
}

#endif
