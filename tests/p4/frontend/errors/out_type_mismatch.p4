// expect: 6:16: type mismatch for out argument 'result' of read: expected bit<32>, got bit<16>
#include <v1model.p4>
control c(inout bit<16> v) {
    register<bit<32>>(8) r;
    apply {
        r.read(v, 0);
    }
}
