// expect: 5:23: syntax error: unexpected '}'
header h_t {
    bit<8> f;
}
header g_t { bit<8> f }
