// expect: 4:9: 'v' cannot be called
control c(inout bit<8> v) {
    apply {
        v();
    }
}
