// expect: 4:13: cannot cast bool to bit<8>
control c(inout bit<8> a, in bool b) {
    apply {
        a = (bit<8>)b;
    }
}
