// expect: 3:1: parser p has no 'start' state
#include <core.p4>
parser p(packet_in b) {
    state begin { transition accept; }
}
