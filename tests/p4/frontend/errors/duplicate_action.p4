// expect: 4:5: duplicate declaration of 'a'
control c(inout bit<8> v) {
    action a() { v = 1; }
    action a() { v = 2; }
    apply { a(); }
}
