// expect: 8:26: unsupported: a table implementation that is not the name of an action_profile or action_selector instance
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
