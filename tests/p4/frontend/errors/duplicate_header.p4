// expect: 3:1: duplicate declaration of 'h_t' (previous declaration at
header h_t { bit<8> f; }
header h_t { bit<16> g; }
