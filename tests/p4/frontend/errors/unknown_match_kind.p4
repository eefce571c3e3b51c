// expect: 5:17: unknown match kind 'fuzzy'
#include <core.p4>
control c(inout bit<8> v) {
    table t {
        key = { v: fuzzy; }
        actions = { NoAction; }
    }
    apply { t.apply(); }
}
