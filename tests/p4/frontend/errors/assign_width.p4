// expect: 4:13: type mismatch: expected bit<8>, got bit<16>
control c(inout bit<8> a, in bit<16> b) {
    apply {
        a = b;
    }
}
