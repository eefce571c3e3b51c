// expect: 6:16: argument 'result' of read (out) must be an l-value (a writable variable, field or parameter)
#include <v1model.p4>
control c(inout bit<32> v) {
    register<bit<32>>(8) r;
    apply {
        r.read(v + 1, 0);
    }
}
