"""Triton's python/test/unit/language/test_frontend.py, ported to minitriton: the tests that
run a kernel or plain Python rather than check the IR Triton generates (those use FileCheck on
MLIR, which minitriton does not produce).  Aggregates (`triton.aggregate`: fields, defaults,
inheritance, immutability, `tl.aggregate_replace`), constexpr functions, tuple assignment and
list comprehensions in kernels, tuples of constexprs as arguments, refusals.

Source: triton-lang/triton (MIT licence), the stored copy at commit
010d0fee4d5519187315235e235295003dfb8555.  Kernels unchanged.  Triton's `run_parser(kernel,
args)` builds the kernel's IR without running it; here it is `kernel.warmup(*args, grid=(1,))`,
which runs the first program with its writes dropped, so what Triton refuses while building
(a failed static_assert, an assignment to an aggregate's field) is refused the same way.
Not ported, beside the FileCheck tests: the ones that build or compare `tl.tuple_type`s (a
front-end type object minitriton does not model; a constexpr's `.type` and `tl.constexpr_type`
run, tests/test_language_ext.py),
`test_fp8_div_mod_promotion` (the newest Triton promotes `/` and `%` of half floats to fp32;
minitriton keeps the earlier rule test_core.py checks), gluon's jit, and the code generator's
visit counts.
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import pytest

import minitriton as triton                 # was: import triton
import minitriton.language as tl            # was: import triton.language as tl
from minitriton.compiler.errors import CompilationError


def run_parser(kernel, args=()):
    """Triton builds the kernel's IR; minitriton runs its first program, writing nothing."""
    kernel.warmup(*args, grid=(1, ))


def test_jit_variadic_keyword_arguments():

    def kernel(**kwargs):
        pass

    with pytest.raises(TypeError, match=r"JIT functions do not support \*\*kwargs"):
        triton.jit(kernel)


def doesnt_compile(kernel):

    @functools.wraps(kernel)
    def test_fn():
        with pytest.raises(triton.CompilationError):
            run_parser(kernel)

    return test_fn


@triton.jit
def anchor(v):
    pass


@triton.aggregate
class Pair:
    first: tl.tensor
    second: tl.tensor

    @triton.jit
    def get_first(self):
        return self.first

    def get_second(self, _semantic=None):
        return self.second

    @triton.jit
    def unpack(self):
        return self.get_first(), self.get_second()

    def __getitem__(self, ind: tl.constexpr, _semantic=None):
        if ind == 0:
            return self.first
        assert ind == 1
        return self.second

    def __setitem__(self, ind: tl.constexpr, value, _semantic=None):
        if ind == 0:
            self.first = value
        assert ind == 1
        self.second = value


@doesnt_compile
@triton.jit
def test_assign_attribute():
    scalar = 11
    pair = Pair(tl.arange(0, 4), scalar)
    pair.second = 42


@doesnt_compile
@triton.jit
def test_augassign_attribute():
    scalar = 11
    pair = Pair(tl.arange(0, 4), scalar)
    pair.second += 42


@doesnt_compile
@triton.jit
def test_assign_item():
    scalar = 11
    pair = Pair(tl.arange(0, 4), scalar)
    pair[1] = 42


@doesnt_compile
@triton.jit
def test_augassign_item():
    scalar = 11
    pair = Pair(tl.arange(0, 4), scalar)
    pair[1] += 42


@pytest.mark.usefixtures("debug_mode")    # its checks are device asserts
def test_jit_method_and_getitem_run():
    """test_jit_method / test_retrieve_item without FileCheck: the values come back."""

    @triton.jit
    def kernel():
        scalar = 11
        pair = Pair(tl.arange(0, 4), scalar)
        a, b = pair.unpack()
        tl.static_assert(a.shape == [4])
        tl.device_assert(b == 11)
        tl.device_assert(pair[1] == 11)

    run_parser(kernel)


def test_aggregate_auto_init_assigns_members():

    @triton.aggregate
    class State:
        x: tl.constexpr
        y: tl.constexpr

    state = State(3, y=7)
    assert isinstance(state.x, tl.constexpr)
    assert isinstance(state.y, tl.constexpr)
    assert state.x.value == 3
    assert state.y.value == 7


def test_aggregate_auto_init_with_tuples():

    class Shape(NamedTuple):
        x: tl.constexpr
        y: tl.constexpr

    @triton.aggregate
    class State:
        shape: tl.tuple
        strides: tl.tuple

    state = State(Shape(3, tl.constexpr(7)), (7, tl.constexpr(1)))
    assert isinstance(state.shape, tl.tuple)
    assert isinstance(state.shape.x, tl.constexpr)
    assert isinstance(state.shape.y, tl.constexpr)
    assert state.shape[0].value == 3
    assert state.shape[1].value == 7

    assert isinstance(state.strides, tl.tuple)
    assert isinstance(state.strides[0], tl.constexpr)
    assert isinstance(state.strides[1], tl.constexpr)
    assert state.strides[0].value == 7
    assert state.strides[1].value == 1


def test_aggregate_auto_init_respects_user_defined_init():

    @triton.aggregate
    class State:
        x: tl.constexpr

        def __init__(self, x):
            self.x = tl.constexpr(x + 1)

    state = State(10)
    assert state.x.value == 11


@triton.constexpr_function
def constexpr_function(x):
    return x + 1


def test_constexpr_function_from_jit():
    """test_constexpr_function_from_jit without FileCheck: the value sizes a block."""

    @triton.jit
    def kernel():
        x: tl.constexpr = constexpr_function(7)
        tl.static_assert(tl.arange(0, x).shape == [8])

    run_parser(kernel)


def test_constexpr_function_from_python():
    assert constexpr_function(7) == 8

    @triton.constexpr_function
    def with_kwargs(**kwargs):
        return kwargs["value"] + 1

    assert with_kwargs(value=7) == 8


def test_tuple_assignment_rejects_too_many_values():

    @triton.jit
    def kernel():
        a, b = (1, 2, 3)  # noqa: F841

    with pytest.raises(CompilationError, match="too many values to unpack"):
        run_parser(kernel)


def test_tuple_assignment_rejects_too_few_values():

    @triton.jit
    def kernel():
        a, b, c = (1, 2)  # noqa: F841

    with pytest.raises(CompilationError, match=r"not enough values to unpack \(expected 3, got 2\)"):
        run_parser(kernel)


def test_tuple_assignment_rejects_nested_mismatch():

    @triton.jit
    def kernel():
        (a, b), c = ((1, 2, 3), 4)  # noqa: F841

    with pytest.raises(CompilationError, match="too many values to unpack"):
        run_parser(kernel)


def test_tuple_assignment_rejects_starred_target():

    @triton.jit
    def kernel():
        a, *rest = (1, 2, 3)  # noqa: F841

    with pytest.raises(CompilationError, match="starred assignment targets are not supported"):
        run_parser(kernel)


def test_list_comprehension_if_filter():

    @triton.jit
    def kernel():
        # an `if` filter drops the elements whose condition is false
        vals: tl.constexpr = [x for x in (10, 20, 30, 40) if x >= 30]
        tl.static_assert(len(vals) == 2)
        tl.static_assert(vals[0] == 30)
        tl.static_assert(vals[1] == 40)

        # multiple `if` clauses compose as "and"
        multi: tl.constexpr = [x for x in (0, 1, 2, 3, 4, 5) if x > 1 if x % 2 == 0]
        tl.static_assert(len(multi) == 2)
        tl.static_assert(multi[0] == 2)
        tl.static_assert(multi[1] == 4)

        # an unfiltered comprehension is unchanged
        allv: tl.constexpr = [x for x in (10, 20, 30, 40)]
        tl.static_assert(len(allv) == 4)

    run_parser(kernel)


def test_list_comprehension_tuple_target():

    @triton.jit
    def kernel():
        vals: tl.constexpr = [a + b for a, b in ((1, 2), (3, 4))]
        tl.static_assert(len(vals) == 2)
        tl.static_assert(vals[0] == 3)
        tl.static_assert(vals[1] == 7)

        nested: tl.constexpr = [a + b + c for a, (b, c) in ((1, (2, 3)), (4, (5, 6)))]
        tl.static_assert(len(nested) == 2)
        tl.static_assert(nested[0] == 6)
        tl.static_assert(nested[1] == 15)

    run_parser(kernel)


def test_list_comprehension_tuple_target_rejects_mismatch():

    @triton.jit
    def kernel():
        vals = [a + b for a, b in ((1, 2, 3), )]  # noqa: F841

    with pytest.raises(CompilationError, match="too many values to unpack"):
        run_parser(kernel)


def test_list_comprehension_tuple_target_rejects_scalar_item():

    @triton.jit
    def kernel():
        vals = [a + b for a, b in (1, 2)]  # noqa: F841

    with pytest.raises(CompilationError, match="cannot unpack non-iterable value"):
        run_parser(kernel)


def test_list_comprehension_tuple_target_rejects_starred_target():

    @triton.jit
    def kernel():
        vals = [a for a, *rest in ((1, 2, 3), )]  # noqa: F841

    with pytest.raises(CompilationError, match="starred assignment targets are not supported"):
        run_parser(kernel)


@triton.jit
def swap(pair):
    return pair.second, pair.first


@doesnt_compile
@triton.jit
def test_assign_tuple_attrs_kernel():
    p = Pair(tl.arange(0, 4), tl.arange(4, 8))
    p.first, p.second = swap(p)


@triton.aggregate
class AggregateWithConstexpr:
    a: tl.tensor
    b: tl.constexpr

    @staticmethod
    def create(a):
        return AggregateWithConstexpr(a, tl.constexpr(42))

    @triton.jit
    def modify(self, a):
        self.a = a
        return self


@doesnt_compile
@triton.jit
def test_reassign_aggregate_with_constexpr():
    agg = AggregateWithConstexpr.create(tl.arange(0, 4))
    agg = agg.modify(tl.arange(4, 8))


def test_return_in_while():

    @triton.jit
    def kernel():
        i = 0
        while i < 10:
            if i == 5:
                return
            i += 1

    with pytest.raises(CompilationError) as e:
        run_parser(kernel)

    assert "Cannot have `return` statements inside `while` or `for` statements in triton" in str(e.value)


class TensorPtr(NamedTuple):
    test: tl.constexpr


class TestTuple(NamedTuple):
    __test__ = False
    test: TensorPtr


@triton.jit
def foo(test: TestTuple):
    x: tl.constexpr = tl.constexpr(1)
    for i in tl.range(x):
        # Tests that it compiles and is usable.
        tl.static_assert(test.test.test == 1)


def test_tuple_constexpr():
    test = TestTuple(test=TensorPtr(tl.constexpr(1)))
    run_parser(foo, args=(test, ))


@triton.jit
def tuple_arg_identity(xs):
    return xs


def test_jit_call_tuple_of_tensors_plus_tuple_of_int():

    @triton.jit
    def kernel():
        x0 = tl.program_id(0)
        x1 = tl.program_id(1)
        tuple_arg_identity((x0, x1)[:-1] + (1, ))

    run_parser(kernel)


@triton.aggregate
class AggregateWithConstexprFunction:
    val: tl.constexpr
    val_squared: tl.constexpr

    def __init__(self, val):
        self.val = tl.constexpr(val)
        self.val_squared = tl.constexpr(self.square_val())

    @triton.constexpr_function
    def square_val(self):
        return self.val * self.val


def test_aggregate_constexpr_function():
    """test_aggregate_constexpr_function without FileCheck: the values are compile-time."""

    @triton.jit
    def kernel():
        agg = AggregateWithConstexprFunction(4)
        tl.static_assert(agg.val == 4)
        tl.static_assert(agg.val_squared == 16)
        tl.static_assert(agg.square_val() == 16)

    run_parser(kernel)


def test_constexpr_min_error():

    @triton.jit
    def min_kernel(a: tl.constexpr, b: tl.constexpr):
        min(a, b)

    with pytest.raises(CompilationError):
        run_parser(min_kernel, args=(1.0, float("nan")))

    with pytest.raises(CompilationError):
        run_parser(min_kernel, args=(1.0, -0.0))


def test_constexpr_max_error():

    @triton.jit
    def max_kernel(a: tl.constexpr, b: tl.constexpr):
        max(a, b)

    with pytest.raises(CompilationError):
        run_parser(max_kernel, args=(1.0, float("nan")))

    with pytest.raises(CompilationError):
        run_parser(max_kernel, args=(1.0, -0.0))


def test_constexpr_return():

    @triton.jit
    def get_constexpr_value():
        return tl.constexpr(42)

    @triton.jit
    def test():
        x: tl.constexpr = get_constexpr_value()
        tl.static_assert(x == 42)

    run_parser(test)


def test_aggregate_field_inheritance():
    """Child aggregate inherits parent fields."""

    @triton.aggregate
    class Base:
        x: tl.constexpr

    @triton.aggregate
    class Child(Base):
        y: tl.constexpr

    child = Child(10, 20)
    assert isinstance(child.x, tl.constexpr)
    assert isinstance(child.y, tl.constexpr)
    assert child.x.value == 10
    assert child.y.value == 20


def test_aggregate_multilevel_inheritance():
    """Multi-level inheritance: grandparent -> parent -> child."""

    @triton.aggregate
    class GrandParent:
        a: tl.constexpr

    @triton.aggregate
    class Parent(GrandParent):
        b: tl.constexpr

    @triton.aggregate
    class Child(Parent):
        c: tl.constexpr

    child = Child(1, 2, 3)
    assert child.a.value == 1
    assert child.b.value == 2
    assert child.c.value == 3


def test_aggregate_inheritance_requires_aggregate_base():

    class Base:
        pass

    with pytest.raises(TypeError, match="Aggregates can only inherit from other aggregates"):

        @triton.aggregate
        class Child(Base):
            x: tl.constexpr


def test_aggregate_field_inheritance_with_methods():
    """Inherited methods work with inherited fields."""

    @triton.aggregate
    class Base:
        x: tl.constexpr

        @triton.constexpr_function
        def get_x(self):
            return self.x

    @triton.aggregate
    class Child(Base):
        y: tl.constexpr

    child = Child(10, 20)
    assert child.get_x().value == 10


def test_aggregate_default_values():
    """Fields with default values can be omitted from constructor."""

    @triton.aggregate
    class WithDefaults:
        x: tl.constexpr
        y: tl.constexpr = tl.constexpr(42)

    # Provide both
    obj1 = WithDefaults(10, 20)
    assert obj1.x.value == 10
    assert obj1.y.value == 20

    # Use default for y
    obj2 = WithDefaults(10)
    assert obj2.x.value == 10
    assert obj2.y.value == 42


def test_aggregate_replace():
    """aggregate_replace creates a copy with modified fields."""

    @triton.aggregate
    class State:
        x: tl.constexpr
        y: tl.constexpr

    original = State(10, 20)
    modified = tl.aggregate_replace(original, x=30)

    # Modified has the new value
    assert modified.x.value == 30
    assert modified.y.value == 20

    # Original is unchanged
    assert original.x.value == 10
    assert original.y.value == 20


def test_aggregate_replace_invalid_field():
    """aggregate_replace raises on unknown field names."""

    @triton.aggregate
    class State:
        x: tl.constexpr

    obj = State(10)
    with pytest.raises(TypeError, match="has no field 'z'"):
        tl.aggregate_replace(obj, z=99)


def test_aggregate_replace_non_aggregate():
    """aggregate_replace raises on non-aggregate instances."""
    with pytest.raises(TypeError, match="expects an aggregate instance"):
        tl.aggregate_replace(42, x=1)


def test_aggregate_inherited_defaults():
    """Child inherits default values from parent fields."""

    @triton.aggregate
    class Base:
        x: tl.constexpr = tl.constexpr(100)

    @triton.aggregate
    class Child(Base):
        y: tl.constexpr

    child = Child(y=7)
    assert child.x.value == 100
    assert child.y.value == 7


def test_aggregate_string_annotations_resolved():
    """String annotations (PEP 649 / forward refs) resolve via typing.get_type_hints."""

    @triton.aggregate
    class StringAnnoBase:
        x: "tl.constexpr"  # explicit string annotation — must resolve

    @triton.aggregate
    class StringAnnoChild(StringAnnoBase):
        y: "tl.constexpr"  # inherited annotation chain must resolve too

    child = StringAnnoChild(10, 20)
    assert isinstance(child.x, tl.constexpr)
    assert isinstance(child.y, tl.constexpr)
    assert child.x.value == 10
    assert child.y.value == 20


def test_aggregate_default_value_auto_wrapped():
    """A raw-int default (`y: tl.constexpr = 42`) is auto-wrapped to constexpr at init."""

    @triton.aggregate
    class State:
        x: tl.constexpr
        y: tl.constexpr = 42  # raw int default — no tl.constexpr() wrap

    obj = State(10)
    assert isinstance(obj.y, tl.constexpr)
    assert obj.y.value == 42
    # Explicit override still works.
    obj2 = State(10, 99)
    assert obj2.y.value == 99


def test_aggregate_post_construction_immutable():
    """Field assignment after construction is rejected (matches dataclasses(frozen=True))."""

    @triton.aggregate
    class State:
        x: tl.constexpr
        y: tl.constexpr

    obj = State(10, 20)
    with pytest.raises(AttributeError, match="cannot assign to field 'x' on immutable aggregate"):
        obj.x = tl.constexpr(99)
    # Original value unchanged.
    assert obj.x.value == 10

    # aggregate_replace() builds a modified copy without mutating the original.
    new = tl.aggregate_replace(obj, x=tl.constexpr(77))
    assert new.x.value == 77
    assert obj.x.value == 10


@triton.aggregate
class _AggMethodBase:
    val: tl.tensor
    BLOCK: tl.constexpr

    @triton.jit
    def doubled(self):
        return self.val + self.val


@triton.aggregate
class _AggMethodChild(_AggMethodBase):
    offset: tl.tensor


@triton.aggregate
class _AggReplaceState:
    vals: tl.tensor
    BLOCK: tl.constexpr


@pytest.mark.usefixtures("debug_mode")    # its checks are device asserts
def test_aggregate_inherited_method_and_replace_run():
    """test_aggregate_inherited_method_ir / test_aggregate_replace_ir without FileCheck."""

    @triton.jit
    def kernel():
        v = tl.arange(0, 8)
        o = tl.arange(8, 16)
        child = _AggMethodChild(v, 8, o)
        d = child.doubled()
        tl.device_assert(d == 2 * v)
        tl.device_assert(child.offset == o)
        state = _AggReplaceState(v, 8)
        state2 = tl.aggregate_replace(state, vals=o)
        tl.device_assert(state2.vals == o)
        tl.device_assert(state.vals == v)
        tl.static_assert(state2.BLOCK == 8)

    run_parser(kernel)


def test_dot_fp16_accumulator():

    @triton.jit
    def fp16_acc_kernel():
        c = tl.zeros([16, 16], dtype=tl.float16)
        a = tl.full([16, 16], 1, dtype=tl.float16)
        b = tl.full([16, 16], 1, dtype=tl.float16)
        tl.dot(a, b, c)

    run_parser(fp16_acc_kernel)
