// expect: 7:13: select keyset has 1 values, expected 2
#include <core.p4>
parser p(packet_in b, in bit<8> x, in bit<8> y) {
    state start {
        transition select(x, y) {
            (1, 2): accept;
            3: reject;
        }
    }
}
