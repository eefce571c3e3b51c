// expect: 4:13: if condition must be bool, not bit<1>
control c(inout bit<1> a) {
    apply {
        if (a) {
            a = 0;
        }
    }
}
