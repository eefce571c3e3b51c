// expect: 3:5: unsupported: abstract methods
extern Foo {
    abstract void cb(inout bit<8> x);
    Foo();
}
