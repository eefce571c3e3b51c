// expect: 8:13: entry has 2 keys, table t has 1
#include <core.p4>
control c(inout bit<8> v) {
    table t {
        key = { v: exact; }
        actions = { NoAction; }
        const entries = {
            (1, 2): NoAction();
        }
    }
    apply { t.apply(); }
}
