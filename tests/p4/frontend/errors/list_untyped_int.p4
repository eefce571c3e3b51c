// expect: 5:54: the width of an untyped integer in a list cannot be inferred
#include <v1model.p4>
control c(inout bit<16> h, in bit<8> a) {
    apply {
        hash(h, HashAlgorithm.crc16, 16w0, { a, 8w1, 0 }, 32w65536);
    }
}
