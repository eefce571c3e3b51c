// expect: 3:14: syntax error: unexpected character '$'
const bit<8> X = 1;
const bit<8> $Y = 2;
