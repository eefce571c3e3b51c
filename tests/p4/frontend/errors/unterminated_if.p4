// expect: 3:1: Unterminated #if
const bit<8> X = 1;
#ifdef SOMETHING
const bit<8> Y = 2;
