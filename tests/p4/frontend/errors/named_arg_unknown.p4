// expect: 5:15: f has no parameter 'z'
bit<8> f(in bit<8> x) { return x; }
control c(inout bit<8> v) {
    apply {
        v = f(z = 1);
    }
}
