// expect: 6:15: header h_t has no field 'g'
header h_t { bit<8> f; }
control c(inout h_t h) {
    apply {
        h.f = 1;
        h.f = h.g;
    }
}
