// expect: 4:27: type mismatch in '+': bit<8> and bit<16>
control c(inout bit<8> a, inout bit<16> b) {
    apply {
        b = (bit<16>)a + (a + b);
    }
}
