// expect: 4:26: unsupported: for-in over a list
control c(inout bit<8> x) {
    apply {
        for (bit<8> e in { x, 8w1 }) {
            x = x + e;
        }
    }
}
