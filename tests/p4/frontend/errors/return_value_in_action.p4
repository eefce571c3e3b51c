// expect: 3:25: return with a value outside a function returning one
control c(inout bit<8> v) {
    action a() { v = 1; return 1; }
    apply { a(); }
}
