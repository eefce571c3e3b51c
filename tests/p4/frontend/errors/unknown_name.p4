// expect: 5:17: unknown name 'y'
#include <core.p4>
control c(inout bit<8> x) {
    apply {
        x = x + y;
    }
}
