// expect: 6:9: t.apply takes no arguments, got 1
#include <core.p4>
control c(inout bit<8> v) {
    table t { actions = { NoAction; } }
    apply {
        t.apply(v);
    }
}
