// expect: 5:9: wrong number of arguments to mark_to_drop: expected 0 or 1, got 2
#include <v1model.p4>
control c(inout standard_metadata_t sm) {
    apply {
        mark_to_drop(sm, sm);
    }
}
