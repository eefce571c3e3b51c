// expect: 5:9: duplicate declaration of 'x'
control c(inout bit<8> v) {
    apply {
        bit<8> x = 1;
        bit<8> x = 2;
        v = x;
    }
}
