// expect: 4:5: wrong number of arguments to constructor of counter: expected 2, got 1
#include <v1model.p4>
control c(inout bit<8> v) {
    counter(32w16) cnt;
    apply { }
}
