// expect: 6:9: extern register has no method 'increment'
#include <v1model.p4>
control c(inout bit<8> v) {
    register<bit<8>>(4) r;
    apply {
        r.increment(0);
    }
}
