/* @field_list with a named constant, as p4c accepts: the recirculated copy keeps only `kept`. */
#include <core.p4>
#include <v1model.p4>
const bit<8> FL_RECIRC = 3;
header h_t { bit<8> a; }
struct metadata { @field_list(FL_RECIRC) bit<8> kept; bit<8> lost; }
struct headers { h_t h; }
parser P(packet_in p, out headers hdr, inout metadata m, inout standard_metadata_t sm) {
  state start { p.extract(hdr.h); transition accept; } }
control VC(inout headers h, inout metadata m) { apply {} }
control I(inout headers hdr, inout metadata m, inout standard_metadata_t sm) {
  apply {
    if (sm.instance_type == 0) { m.kept = 7; m.lost = 9; sm.egress_spec = 2; }
    else { hdr.h.a = m.kept + m.lost; sm.egress_spec = 1; }
  } }
control E(inout headers hdr, inout metadata m, inout standard_metadata_t sm) { apply { if (sm.instance_type == 0 && sm.egress_port == 2) { recirculate_preserving_field_list(FL_RECIRC); } } }
control CC(inout headers h, inout metadata m) { apply {} }
control D(packet_out p, in headers h) { apply { p.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
