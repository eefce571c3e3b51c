// expect: 2:27: syntax error: unexpected end of file
control c(inout bit<8> x) {
