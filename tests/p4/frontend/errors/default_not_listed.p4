// expect: 9:26: action 'b' is not in the actions of table t
#include <core.p4>
control c(inout bit<8> v) {
    action a() { v = 1; }
    action b() { v = 2; }
    table t {
        key = { v: exact; }
        actions = { a; }
        default_action = b();
    }
    apply { t.apply(); }
}
