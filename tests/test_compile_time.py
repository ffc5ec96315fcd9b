"""What Triton fixes when a kernel compiles (block shapes, reduction axes, static asserts,
static_range bounds, arguments specialized to constants): a runtime value there is refused
with Triton's message, since a kernel that ran here on it would not compile on a GPU."""
import numpy as np
import pytest

import minitriton as mt
import minitriton.language as tl


@mt.jit
def static_range_bound_kernel(x_ptr, n, N: tl.constexpr):
    acc = 0
    for i in tl.static_range(N):
        acc += i
    for i in tl.static_range(n):
        acc += i
    tl.store(x_ptr, acc)


@mt.jit(do_not_specialize=["n"])
def unspecialized_kernel(x_ptr, n):
    tl.static_assert(n.dtype == tl.int32)
    tl.store(x_ptr, n)


def test_static_range_needs_compile_time_bounds():
    """tl.static_range unrolls at compile time: Triton asserts its bounds are constexprs.  An
    integer argument equal to 1 is one (Triton specializes on it) unless do_not_specialize names it."""
    x = np.zeros(1, np.int32)
    static_range_bound_kernel[(1,)](x, 1, 4)
    assert x[0] == 6
    with pytest.raises(AssertionError, match="used as tl.static_range start value is not a constexpr"):
        static_range_bound_kernel[(1,)](x, 3, 4)
    unspecialized_kernel[(1,)](x, 1)
    assert x[0] == 1
    with pytest.raises(ValueError, match="do_not_specialize names no parameter: 'm'"):
        mt.jit(do_not_specialize=["m"])(unspecialized_kernel.fn)


@mt.jit
def runtime_value_kernel(x_ptr, n, WHERE: tl.constexpr):
    v = tl.load(x_ptr + tl.arange(0, 4))
    if WHERE == "zeros":
        v += tl.sum(tl.zeros((n,), tl.float32))
    elif WHERE == "reshape":
        v = tl.reshape(v, (n, 2)).reshape(4)
    elif WHERE == "broadcast":
        v += tl.sum(tl.broadcast_to(v, (n, 4)))
    elif WHERE == "axis":
        v += tl.sum(v, axis=n)
    elif WHERE == "scan axis":
        v = tl.cumsum(v, axis=n)
    elif WHERE == "static_assert":
        tl.static_assert(n > 0)
    tl.store(x_ptr + tl.arange(0, 4), v)


@pytest.mark.parametrize("where, error, message", [
    ("zeros", TypeError, "Shape element 0 must have type `constexpr\\[int\\]`"),
    ("reshape", TypeError, "Shape element 0 must have type `constexpr\\[int\\]`"),
    ("broadcast", TypeError, "Shape element 0 must have type `constexpr\\[int\\]`"),
    ("axis", TypeError, "a reduction's axis must be a constexpr"),
    ("scan axis", TypeError, "tl.cumsum's axis must be a constexpr"),
    ("static_assert", NotImplementedError, "Assertion condition could not be determined at compile-time"),
])
def test_a_runtime_value_where_triton_needs_a_constant_is_refused(where, error, message):
    x = np.arange(4, dtype=np.float32)
    with pytest.raises(error, match=message):
        runtime_value_kernel[(1,)](x, 2, where)
    if where in ("zeros", "broadcast", "static_assert"):   # an argument equal to 1 is a constant (specialized)
        runtime_value_kernel[(1,)](x, 1, where)
