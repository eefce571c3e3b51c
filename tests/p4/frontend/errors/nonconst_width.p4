// expect: 4:14: type width must be a compile-time integer constant
control c(inout bit<8> v) {
    apply {
        bit<(v)> w = 0;
    }
}
