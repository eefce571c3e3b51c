// expect: 5:5: duplicate parser state 'start'
#include <core.p4>
parser p(packet_in b) {
    state start { transition accept; }
    state start { transition reject; }
}
