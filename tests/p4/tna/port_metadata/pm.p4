/* Port metadata on the TNA model (tests/sw/test_tna_port_metadata.py): the ingress parser
 * unpacks pm_t (20 bits, as the authors' receiver's); ingress sends the frame to port `to`, in
 * the egress queue (qid) tag[2:0], and writes the four fields into the source MAC (a, b: a byte
 * each; to, tag: 16 bits each). */
#include <tna.p4>
header eth_h { bit<48> dst; bit<48> src; bit<16> etype; }
struct h_t { eth_h eth; }
struct pm_t { bit<1> a; bit<1> b; PortId_t to; bit<9> tag; }
struct m_t { pm_t pm; }
parser IP(packet_in p, out h_t h, out m_t m, out ingress_intrinsic_metadata_t i) {
    state start {
        p.extract(i);
        m.pm = port_metadata_unpack<pm_t>(p);
        p.extract(h.eth);
        transition accept;
    }
}
control I(inout h_t h, inout m_t m, in ingress_intrinsic_metadata_t i,
          in ingress_intrinsic_metadata_from_parser_t pr,
          inout ingress_intrinsic_metadata_for_deparser_t d,
          inout ingress_intrinsic_metadata_for_tm_t tm) {
    apply {
        tm.ucast_egress_port = m.pm.to;
        tm.qid = (QueueId_t)m.pm.tag[2:0];
        h.eth.src[47:40] = (bit<8>)m.pm.a;
        h.eth.src[39:32] = (bit<8>)m.pm.b;
        h.eth.src[31:16] = (bit<16>)m.pm.to;
        h.eth.src[15:0] = (bit<16>)m.pm.tag;
    }
}
control ID(packet_out p, inout h_t h, in m_t m,
           in ingress_intrinsic_metadata_for_deparser_t d) { apply { p.emit(h); } }
parser EP(packet_in p, out h_t h, out m_t m, out egress_intrinsic_metadata_t e) {
    state start { p.extract(e); transition accept; } }
control E(inout h_t h, inout m_t m, in egress_intrinsic_metadata_t eg_intr_md,
          in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
          inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
          inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}
control ED(packet_out p, inout h_t h, in m_t m,
           in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { }
}
Pipeline(IP(), I(), ID(), EP(), E(), ED()) pipe;
Switch(pipe) main;
