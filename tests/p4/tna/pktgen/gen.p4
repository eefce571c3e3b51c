/* The packet generator and PFC pause on the TNA model (tests/sw/test_tna_pktgen.py): packets from
 * the generator port (68) keep their pktgen header and leave on port 2 (timer applications) or
 * port 3 (application 7, the port-down one); other packets are forwarded by table `t`. */
#include <core.p4>
#include <tna.p4>

header eth_h { bit<48> dst; bit<48> src; bit<16> etype; }
struct h_t { pktgen_timer_header_t timer; pktgen_port_down_header_t down; eth_h eth; }
struct m_t { }

parser IP(packet_in pkt, out h_t h, out m_t m, out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        transition select(ig_intr_md.ingress_port) {
            68: generated;
            default: ethernet;
        }
    }
    state generated {
        transition select(pkt.lookahead<bit<8>>()) {
            0x07 &&& 0x07: down;
            default: timer;
        }
    }
    state timer { pkt.extract(h.timer); transition accept; }
    state down { pkt.extract(h.down); transition accept; }
    state ethernet { pkt.extract(h.eth); transition accept; }
}

control I(inout h_t h, inout m_t m, in ingress_intrinsic_metadata_t ig_intr_md,
          in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
          inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
          inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action fwd(PortId_t port) { ig_tm_md.ucast_egress_port = port; }
    table t {
        key = { ig_intr_md.ingress_port : exact; }
        actions = { fwd; NoAction; }
        size = 16;
        default_action = NoAction();
    }
    apply {
        if (h.timer.isValid()) {
            ig_tm_md.ucast_egress_port = 2;
        } else if (h.down.isValid()) {
            ig_tm_md.ucast_egress_port = 3;
        } else {
            t.apply();
        }
    }
}

control ID(packet_out pkt, inout h_t h, in m_t m,
           in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(h); }
}

parser EP(packet_in pkt, out h_t h, out m_t m, out egress_intrinsic_metadata_t eg_intr_md) {
    state start { pkt.extract(eg_intr_md); transition accept; }
}

control E(inout h_t h, inout m_t m, in egress_intrinsic_metadata_t eg_intr_md,
          in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
          inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
          inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}

control ED(packet_out pkt, inout h_t h, in m_t m,
           in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { }
}

Pipeline(IP(), I(), ID(), EP(), E(), ED()) pipe;
Switch(pipe) main;
