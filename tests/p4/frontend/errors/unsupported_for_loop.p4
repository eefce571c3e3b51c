// expect: 5:9: unsupported: for loops
control c(inout bit<8> v) {
    apply {
        bit<8> i;
        for (i = 0; i < 4; i = i + 1) {
            v = v + 1;
        }
    }
}
