// expect: 6:9: default_action must name an action
#include <core.p4>
control c(inout bit<8> v) {
    table t {
        actions = { NoAction; }
        default_action = 5;
    }
    apply { t.apply(); }
}
