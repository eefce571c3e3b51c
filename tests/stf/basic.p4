// The kit's basic IPv4 forwarding program (p4/basic.p4), run from the STF corpus.
#include "../../p4/basic.p4"
