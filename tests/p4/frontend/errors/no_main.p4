// expect: 1:1: program has no 'main' package instance
#include <core.p4>
const bit<8> X = 1;
