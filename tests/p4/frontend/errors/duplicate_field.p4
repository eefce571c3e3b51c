// expect: 4:5: duplicate field 'f' in header h_t
header h_t {
    bit<8> f;
    bit<4> f;
}
