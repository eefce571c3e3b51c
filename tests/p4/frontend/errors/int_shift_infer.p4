// expect: 4:14: the width of an untyped integer shifted by a non-constant amount cannot be inferred
control c(inout bool r, in bit<8> n) {
    apply {
        r = (1 << n) == 2;
    }
}
