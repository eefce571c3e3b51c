// expect: 4:13: slice [8:0] out of range for bit<8>
control c(inout bit<9> a, in bit<8> b) {
    apply {
        a = b[8:0];
    }
}
