// expect: 4:9: 'break' outside a for loop
control c(inout bit<8> v) {
    apply {
        break;
    }
}
