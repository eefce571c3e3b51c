// expect: 4:18: '++' needs bit<W> or int<W> operands with a width, not int
control c(inout bit<16> a, in bit<8> b) {
    apply {
        a = b ++ 1;
    }
}
