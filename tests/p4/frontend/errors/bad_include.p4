// expect: 2:1: Include file 'no_such_file.p4' not found
#include <no_such_file.p4>
const bit<8> X = 1;
