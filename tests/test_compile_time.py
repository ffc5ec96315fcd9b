"""What Triton checks when a kernel compiles: the values it fixes then (block shapes, reduction
axes, static asserts, static_range bounds, arguments specialized to constants) and the hints a
load or store carries.  A runtime value there, or a hint Triton does not know, is refused with
Triton's message, since a kernel that ran here on it would not compile on a GPU."""
import numpy as np
import pytest

import minitriton as mt
import minitriton.language as tl


def static_range_sums(x_ptr, n, N: tl.constexpr):
    acc = 0
    for i in tl.static_range(N):
        acc += i
    for i in tl.static_range(n):
        acc += i
    tl.store(x_ptr, acc)


static_range_bound_kernel = mt.jit(static_range_sums)
unspecialized_kernel = mt.jit(do_not_specialize=["n"])(static_range_sums)


def test_static_range_needs_compile_time_bounds():
    """tl.static_range unrolls at compile time: Triton asserts its bounds are constexprs.  An
    integer argument equal to 1 is one (Triton specializes on it) unless do_not_specialize names it."""
    x = np.zeros(1, np.int32)
    static_range_bound_kernel[(1,)](x, 1, 4)
    assert x[0] == 6
    with pytest.raises(AssertionError, match="used as tl.static_range start value is not a constexpr"):
        static_range_bound_kernel[(1,)](x, 3, 4)
    with pytest.raises(AssertionError, match="used as tl.static_range start value is not a constexpr"):
        unspecialized_kernel[(1,)](x, 1, 4)       # not specialized: 1 stays a runtime value
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


@mt.jit
def hinted_copy_kernel(x_ptr, y_ptr, LOAD_CACHE: tl.constexpr, STORE_CACHE: tl.constexpr, EVICT: tl.constexpr,
                       OTHER_ALONE: tl.constexpr):
    offs = tl.arange(0, 4)
    if OTHER_ALONE:
        v = tl.load(x_ptr + offs, other=0.0)
    else:
        v = tl.load(x_ptr + offs, mask=offs < 3, other=-1.0, cache_modifier=LOAD_CACHE, eviction_policy=EVICT)
    tl.store(y_ptr + offs, v, cache_modifier=STORE_CACHE, eviction_policy=EVICT)


@pytest.mark.parametrize("load_cache, store_cache, evict, other_alone, message", [
    (".cg", ".cs", "evict_first", False, None),
    (".cv", ".wt", "evict_last", False, None),
    (".wb", "", "", False, "Cache modifier .wb not supported"),        # a store's modifier on a load
    ("", ".ca", "", False, "Cache modifier .ca not supported"),        # and a load's on a store
    ("", "", "evict_normal", False, "Eviction policy evict_normal not supported"),
    ("", "", "", True, "`other` cannot be provided without `mask`"),
])
def test_load_and_store_hints_are_checked_as_triton_checks_them(load_cache, store_cache, evict, other_alone, message):
    x, y = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
    if message is not None:
        with pytest.raises(ValueError, match=message):
            hinted_copy_kernel[(1,)](x, y, load_cache, store_cache, evict, other_alone)
        return
    hinted_copy_kernel[(1,)](x, y, load_cache, store_cache, evict, other_alone)
    np.testing.assert_array_equal(y, [0, 1, 2, -1])
