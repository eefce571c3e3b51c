// expect: 4:19: unknown parser state 'parse_nothing'
#include <core.p4>
parser p(packet_in b) {
    state start { transition parse_nothing; }
}
