// expect: 4:5: unsupported: value_set
#include <core.p4>
parser p(packet_in b, in bit<16> t) {
    value_set<bit<16>>(4) pvs;
    state start {
        transition select(t) { pvs: accept; default: reject; }
    }
}
