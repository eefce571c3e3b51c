// expect: 4:19: exit is not allowed in a parser
#include <core.p4>
parser p(packet_in b) {
    state start { exit; transition accept; }
}
