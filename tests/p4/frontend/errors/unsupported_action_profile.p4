// expect: 8:26: unsupported: table implementation (action profiles/selectors)
#include <v1model.p4>
control c(inout bit<8> v) {
    action a() { v = 1; }
    table t {
        key = { v: exact; }
        actions = { a; }
        implementation = action_profile(32w128);
    }
    apply { t.apply(); }
}
