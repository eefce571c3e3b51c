// expect: 4:9: the left side of an assignment must be an l-value (a writable variable, field or parameter)
control c(in bit<8> a, inout bit<8> b) {
    apply {
        a = b;
    }
}
