// expect: 7:5: f must implement the abstract method 'cb' of Foo
extern Foo {
    abstract void cb(inout bit<8> x);
    Foo();
}
control C() {
    Foo() f;
    apply { }
}
package P(C c);
P(C()) main;
