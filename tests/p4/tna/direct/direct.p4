/* DirectRegister / DirectRegisterAction on the TNA model (tests/sw/test_tna_direct.py): table t
 * counts its hits per entry (initial value 100) into the source MAC; table u sums the EtherTypes
 * of its hits in a struct cell (pair_t) into the destination MAC; t's default action runs on a
 * miss. */
#include <tna.p4>
header eth_h { bit<48> dst; bit<48> src; bit<16> etype; }
struct h_t { eth_h eth; }
struct m_t { }
struct pair_t { bit<16> lo; bit<16> hi; }
parser IP(packet_in p, out h_t h, out m_t m, out ingress_intrinsic_metadata_t i) {
    state start {
        p.extract(i);
        p.advance(PORT_METADATA_SIZE);
        p.extract(h.eth);
        transition accept;
    }
}
control I(inout h_t h, inout m_t m, in ingress_intrinsic_metadata_t i,
          in ingress_intrinsic_metadata_from_parser_t pr,
          inout ingress_intrinsic_metadata_for_deparser_t d,
          inout ingress_intrinsic_metadata_for_tm_t tm) {
    DirectRegister<bit<16>>(100) hits;
    DirectRegisterAction<bit<16>, bit<16>>(hits) count = {
        void apply(inout bit<16> v, out bit<16> rv) { v = v + 1; rv = v; }
    };
    DirectRegister<pair_t>() sums;
    DirectRegisterAction<pair_t, bit<16>>(sums) add = {
        void apply(inout pair_t v, out bit<16> rv) {
            v.lo = v.lo + 1;
            v.hi = v.hi + h.eth.etype;
            rv = v.hi;
        }
    };
    action fwd(PortId_t port) { tm.ucast_egress_port = port; h.eth.src[15:0] = count.execute(); }
    action miss() { tm.ucast_egress_port = 3; h.eth.src[15:0] = count.execute(); }
    table t { key = { i.ingress_port : exact; } actions = { fwd; miss; } size = 4; registers = hits;
              default_action = miss(); }
    action acc() { h.eth.dst[15:0] = add.execute(); }
    table u { key = { h.eth.etype : exact; } actions = { acc; @defaultonly NoAction; } size = 4;
              registers = sums;
              default_action = NoAction(); }
    apply { t.apply(); u.apply(); }
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
