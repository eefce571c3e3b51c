// expect: 9:13: 'b' is not an action of table t
#include <core.p4>
control c(inout bit<8> v) {
    action a() { v = 1; }
    action b() { v = 2; }
    table t { key = { v: exact; } actions = { a; NoAction; } }
    apply {
        switch (t.apply().action_run) {
            b: { v = 3; }
        }
    }
}
