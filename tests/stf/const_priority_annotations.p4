// Const entries ordered by @priority annotations, as p4c's BMv2 backend hands them to BMv2:
// an annotated entry gets its value, an unannotated one its 1-based position, and the smallest
// value wins among the entries that match.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> tag; bit<16> key; }
struct headers { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control Ing(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action to(bit<9> port) { sm.egress_spec = port; }
    table pick {
        key = { hdr.h.key : ternary; }
        actions = { to; }
        default_action = to(9);
        const entries = {
            0x00AB &&& 0x00FF : to(1) @priority(5);   // loses to the two below when they match
            0xCDAB            : to(2);                // position 2
            0xC000 &&& 0xF000 : to(3) @priority(4);
            0x0F00 &&& 0x0F00 : to(4) @priority(1);   // beats everything it overlaps
        }
    }
    apply { pick.apply(); }
}

control Eg(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control Vfy(inout headers hdr, inout meta_t meta) { apply { } }
control Upd(inout headers hdr, inout meta_t meta) { apply { } }
control Dep(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), Vfy(), Ing(), Eg(), Upd(), Dep()) main;
