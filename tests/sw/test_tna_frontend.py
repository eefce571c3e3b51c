"""Abstract methods (P4_16 spec): extern instances that implement them, as TNA's
RegisterAction needs, and the errors for implementations that do not fit."""

from __future__ import annotations

import pytest

from lgkit.sw.lang import ir
from lgkit.sw.lang.frontend import P4Error
from lgkit.sw.lang.frontend.compiler import compile_source

EXTERN = """
extern Reg<T, I> { Reg(bit<32> size); }
extern Act<T, I, U> {
    Act(Reg<_, _> reg);
    U execute(in I index);
    abstract void apply(inout T value, @optional out U rv);
}
control C(inout bit<32> x) {
    Reg<bit<32>, bit<8>>(16) r;
    %s
    apply { x = a.execute(1); }
}
package P(C c);
P(C()) main;
"""


def compile_with(instance: str) -> ir.Program:
    return compile_source(EXTERN % instance).ir


def test_an_instance_implements_the_abstract_method() -> None:
    program = compile_with("Act<bit<32>, bit<8>, bit<32>>(r) a = {"
                           " void apply(inout bit<32> v, out bit<32> rv) { v = v + 1; rv = v; } };")
    control = next(d for d in program.decls if isinstance(d, ir.ControlDecl) and d.name == "C")
    inst = next(d for d in control.locals if isinstance(d, ir.InstanceDecl) and d.name == "a")
    assert [f.name for f in inst.methods] == ["apply"]


def test_an_optional_parameter_may_be_left_out() -> None:
    compile_with("Act<bit<32>, bit<8>, bit<32>>(r) a = { void apply(inout bit<32> v) { v = 0; } };")


@pytest.mark.parametrize(("instance", "message"), [
    ("Act<bit<32>, bit<8>, bit<32>>(r) a;", "a must implement the abstract method 'apply'"),
    ("Act<bit<32>, bit<8>, bit<32>>(r) a = { void apply(inout bit<16> v) { } };",
     "parameter 'v' of 'apply' must be inout bit<32>"),
    ("Act<bit<32>, bit<8>, bit<32>>(r) a = { void apply(inout bit<32> v) { }"
     " void other() { } };", "'other' is not an abstract method of Act"),
    ("Act<bit<32>, bit<8>, bit<32>>(r) a = { bit<8> apply(inout bit<32> v) { return 0; } };",
     "'apply' must return void"),
    ("Act<bit<32>, bit<8>, bit<32>>(r) a = { void apply() { } };",
     "'apply' takes 1 to 2 parameters, not 0"),
    ("Act<bit<32>, bit<8>, bit<32>>(r) a = { void apply(inout bit<32> v) { v = undefined_x; } };",
     "unknown name 'undefined_x'"),
])
def test_implementations_that_do_not_fit_are_located_errors(instance: str, message: str) -> None:
    with pytest.raises(P4Error, match=message):
        compile_with(instance)


BALANCER = """
extern Balancer {
    Balancer();
    bit<32> total();
    abstract bit<16> on_new_flow(in bit<32> address);
}
control C(inout bit<32> x) {
    Balancer() b = {
        bit<16> on_new_flow(in bit<32> address) { return (bit<16>)(this.total() + %s); }
    };
    apply { %s }
}
package P(C c);
P(C()) main;
"""


def test_this_names_the_instance_in_an_implementation() -> None:
    """P4_16 spec 11.3.1: an abstract method's implementation may call the instance's own
    methods through `this`; they are checked as calls on the instance."""
    compile_source(BALANCER % ("address", ""))
    with pytest.raises(P4Error, match="type mismatch in '\\+': bit<32> and bool"):
        compile_source(BALANCER % ("true", ""))
    with pytest.raises(P4Error, match="extern Balancer has no method 'missing'"):
        compile_source(BALANCER.replace("this.total()", "this.missing()") % ("address", ""))


def test_this_outside_an_implementation_is_an_error() -> None:
    with pytest.raises(P4Error, match="'this' is only allowed in the implementation of an "
                       "abstract method"):
        compile_source(BALANCER % ("address", "x = this.total();"))
