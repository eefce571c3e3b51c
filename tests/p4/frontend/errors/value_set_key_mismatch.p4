// expect: 6:32: value_set pvs holds bit<8>, which does not match the select keys
#include <core.p4>
parser p(packet_in b, in bit<16> t) {
    value_set<bit<8>>(4) pvs;
    state start {
        transition select(t) { pvs: accept; default: reject; }
    }
}
