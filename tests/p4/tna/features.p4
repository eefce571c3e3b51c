/* A small TNA program with one action per TNA feature the built-in target models (forwarding,
 * a RegisterAction counter, ingress and egress mirrors, resubmit, recirculation, digest, drop);
 * the STF files beside it exercise one each (tests/sw/test_tna_stf.py). */
#include <core.p4>
#include <tna.p4>

header ethernet_h { bit<48> dst; bit<48> src; bit<16> etype; }
/* Before the Ethernet header in egress: bridged (kind 0) by the ingress deparser, or the
 * mirror header (kind 1 ingress mirror, 2 egress mirror). */
header bridge_h { bit<8> kind; bit<8> emirror; }
header resub_h { bit<8> tag; bit<56> pad; }

struct ig_headers_t { bridge_h bridge; ethernet_h eth; }
struct eg_headers_t { bridge_h bridge; ethernet_h eth; }
struct ig_md_t { resub_h resub; bridge_h mirror; MirrorId_t session; }
struct eg_md_t { bridge_h mirror; MirrorId_t session; }
struct learn_t { bit<48> src; PortId_t port; }

const PortId_t RECIRC_PORT = 68;

parser IgParser(packet_in pkt, out ig_headers_t hdr, out ig_md_t md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        transition select(ig_intr_md.resubmit_flag) {
            1: parse_resubmit;
            default: parse_port_metadata;
        }
    }
    state parse_resubmit { pkt.extract(md.resub); transition parse_ethernet; }
    state parse_port_metadata { pkt.advance(PORT_METADATA_SIZE); transition parse_ethernet; }
    state parse_ethernet { pkt.extract(hdr.eth); transition accept; }
}

control Ig(inout ig_headers_t hdr, inout ig_md_t md,
           in ingress_intrinsic_metadata_t ig_intr_md,
           in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
           inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
           inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<bit<32>, PortId_t>(512, 0) pkts;
    RegisterAction<bit<32>, PortId_t, bit<32>>(pkts) bump = {
        void apply(inout bit<32> value, out bit<32> rv) {
            value = value + 1;
            rv = value;
        }
    };

    action fwd(PortId_t port) { ig_tm_md.ucast_egress_port = port; }
    action fwd_bypass(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
        ig_tm_md.bypass_egress = 1;
    }
    action count_fwd(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
        hdr.eth.src[31:0] = bump.execute(ig_intr_md.ingress_port);
    }
    action mirror_fwd(PortId_t port, MirrorId_t session) {
        ig_tm_md.ucast_egress_port = port;
        ig_dprsr_md.mirror_type = 1;
        md.session = session;
    }
    action emirror_fwd(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
        hdr.bridge.setValid();
        hdr.bridge.emirror = 1;
    }
    action resubmit_fwd(PortId_t port) { ig_tm_md.ucast_egress_port = port; }
    action recirc_fwd(PortId_t port) { ig_tm_md.ucast_egress_port = port; }
    action learn_fwd(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
        ig_dprsr_md.digest_type = 1;
    }
    action multicast(MulticastGroupId_t group) { ig_tm_md.mcast_grp_a = group; }
    action drop() { ig_dprsr_md.drop_ctl = 1; }
    action drop_fwd(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
        ig_dprsr_md.drop_ctl = 1;
    }

    table t {
        key = { ig_intr_md.ingress_port : exact; }
        actions = { fwd; fwd_bypass; count_fwd; mirror_fwd; emirror_fwd; resubmit_fwd;
                    recirc_fwd; learn_fwd; multicast; drop; drop_fwd; }
        default_action = drop();
    }

    apply {
        switch (t.apply().action_run) {
            resubmit_fwd: {
                if (ig_intr_md.resubmit_flag == 0) {
                    ig_dprsr_md.resubmit_type = 1;
                    md.resub.setValid();
                    md.resub.tag = 0xAB;
                } else {
                    hdr.eth.src[7:0] = md.resub.tag;
                }
            }
            recirc_fwd: {
                if (ig_intr_md.ingress_port != RECIRC_PORT) {
                    hdr.eth.src[7:0] = 0xCC;
                    ig_tm_md.ucast_egress_port = RECIRC_PORT;
                } else {
                    hdr.eth.src[15:8] = 0xCD;
                }
            }
            default: { }
        }
        if (ig_tm_md.bypass_egress == 0) { hdr.bridge.setValid(); hdr.bridge.kind = 0; }
        if (ig_dprsr_md.mirror_type == 1) { md.mirror.setValid(); md.mirror.kind = 1; }
    }
}

control IgDeparser(packet_out pkt, inout ig_headers_t hdr, in ig_md_t md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                   in ingress_intrinsic_metadata_t ig_intr_md) {
    Mirror() mirror;
    Resubmit() resubmit;
    Digest<learn_t>() learn;
    apply {
        if (ig_dprsr_md.mirror_type == 1) { mirror.emit(md.session, md.mirror); }
        if (ig_dprsr_md.resubmit_type == 1) { resubmit.emit(md.resub); }
        if (ig_dprsr_md.digest_type == 1) { learn.pack({hdr.eth.src, ig_intr_md.ingress_port}); }
        pkt.emit(hdr);
    }
}

parser EgParser(packet_in pkt, out eg_headers_t hdr, out eg_md_t md,
                out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.bridge);
        pkt.extract(hdr.eth);
        transition accept;
    }
}

control Eg(inout eg_headers_t hdr, inout eg_md_t md,
           in egress_intrinsic_metadata_t eg_intr_md,
           in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
           inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
           inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply {
        if (hdr.bridge.kind != 0) {
            hdr.eth.dst[7:0] = hdr.bridge.kind;  /* a mirror copy says so */
        } else if (hdr.bridge.emirror == 1) {
            eg_dprsr_md.mirror_type = 1;
            md.session = 5;
            md.mirror.setValid();
            md.mirror.kind = 2;
        }
        hdr.eth.dst[15:8] = (bit<8>)eg_intr_md.egress_port;
        hdr.bridge.setInvalid();
    }
}

control EgDeparser(packet_out pkt, inout eg_headers_t hdr, in eg_md_t md,
                   in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Mirror() mirror;
    apply {
        if (eg_dprsr_md.mirror_type == 1) { mirror.emit(md.session, md.mirror); }
        pkt.emit(hdr);
    }
}

Pipeline(IgParser(), Ig(), IgDeparser(), EgParser(), Eg(), EgDeparser()) pipe;
Switch(pipe) main;
