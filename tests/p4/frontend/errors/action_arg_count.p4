// expect: 6:9: wrong number of arguments to a: expected 2, got 1 (missing 'y')
control c(inout bit<8> v) {
    action a(bit<8> x, bit<8> y) { v = x + y; }
    apply {
        a(1, 2);
        a(1);
    }
}
