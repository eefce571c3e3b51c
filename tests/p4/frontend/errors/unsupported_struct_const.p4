// expect: 3:1: unsupported: constants of type struct pair_t
struct pair_t { bit<8> a; bit<8> b; }
const pair_t P = { 1, 2 };
