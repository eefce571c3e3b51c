// expect: 5:9: unsupported: for-in over a header stack or list
header h_t { bit<8> v; }
control c(inout h_t[2] s, inout bit<8> x) {
    apply {
        for (h_t e in s) {
            x = x + e.v;
        }
    }
}
