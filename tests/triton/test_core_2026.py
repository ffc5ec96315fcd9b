"""Triton's test_core.py as of 2026: the tests neither earlier port holds.  A newer tl.dot
precision set (`bf16x3`, `bf16x6`) and fp64 dots, constexpr parameters as constexprs,
one-element conditions (`x.item()`), a histogram past its bins, tensor methods, `cumsum` of
bools, short-circuited `and` over a None argument, `tl.map_elementwise` with control flow,
`@jit(repr=...)` names, atomics of -0.0 and bf16/fp16 atomic adds on overlapping addresses.

Source: a 2026 copy of triton-lang/triton's python/test/unit/language/test_core.py, as a
downstream fork carries it (its header: "test_core.py at main-dev@396df6cb5b001314e36f22220be07a560de44664"),
MIT licence.  Kernels unchanged; host code ours on numpy (torch's dtypes are numpy's here;
bfloat16 is ml_dtypes').
"""
import ml_dtypes
import numpy as np
import pytest
from numpy.random import RandomState

import minitriton as triton                 # was: import triton
import minitriton.language as tl            # was: import triton.language as tl
from minitriton.language.core import constexpr_type   # was: from triton.language.core import constexpr_type

from .helpers import numpy_random, patch_kernel


@pytest.mark.parametrize("input_precision", ["tf32", "tf32x3", "ieee", "bf16x3", "bf16x6"])
@pytest.mark.parametrize("in_dtype, out_dtype", [("float32", "float32"), ("float64", "float64")])
@pytest.mark.parametrize("epilogue", ["none", "chain-dot"])
def test_dot_newer_precisions(input_precision, in_dtype, out_dtype, epilogue, device):
    """test_dot's base cases with the newer precisions and fp64 (at 32x32x32; Triton: three
    sizes and seven epilogues, which test_core_dot.py runs for the older precisions)."""

    @triton.jit
    def kernel(X, Y, W, Z, BLOCK: tl.constexpr, INPUT_PRECISION: tl.constexpr, CHAIN_DOT: tl.constexpr,
               out_dtype: tl.constexpr = tl.float32):
        off = tl.arange(0, BLOCK)
        x = tl.load(X + off[:, None] * BLOCK + off[None, :])
        y = tl.load(Y + off[:, None] * BLOCK + off[None, :])
        z = tl.dot(x, y, input_precision=INPUT_PRECISION, out_dtype=out_dtype)
        if CHAIN_DOT:
            w = tl.load(W + off[:, None] * BLOCK + off[None, :])
            z = tl.dot(z.to(w.dtype), w, input_precision=INPUT_PRECISION, out_dtype=out_dtype)
        tl.store(Z + off[:, None] * BLOCK + off[None, :], z)

    rs = RandomState(17)
    x, y, w = (numpy_random((32, 32), dtype_str=in_dtype, rs=rs) for _ in range(3))
    x *= .1
    y *= .1
    if in_dtype == "float32" and input_precision == "tf32":
        x, y, w = ((v.view("uint32") & np.uint32(0xffffe000)).view("float32") for v in (x, y, w))
    z = np.zeros((32, 32), in_dtype)
    kernel[(1, )](x, y, w, z, BLOCK=32, INPUT_PRECISION=input_precision, CHAIN_DOT=epilogue == "chain-dot",
                  out_dtype=tl.float64 if out_dtype == "float64" else tl.float32)
    z_ref = np.matmul(x, y)
    if epilogue == "chain-dot":
        z_ref = np.matmul(z_ref, w)
    np.testing.assert_allclose(z_ref, z, rtol=0.01, atol=1e-3)


@pytest.mark.parametrize("literal, tensor_ty", [(10, tl.int32), (32.1, tl.float32), ((5, 6, 7), None)])
def test_constexpr_assignment(literal, tensor_ty):

    @triton.jit
    def kernel(input_literal: tl.constexpr, tensor_type: tl.constexpr):
        patched_literal: tl.constexpr = PATCHED
        # Sanity checks
        tl.static_assert(patched_literal.type == constexpr_type(PATCHED))
        tl.static_assert(input_literal.type == constexpr_type(PATCHED))

        assigned_literal: tl.constexpr = input_literal
        tl.static_assert(assigned_literal.type == constexpr_type(PATCHED))
        tl.static_assert(assigned_literal == patched_literal)

        if tensor_type is not None:
            assigned_variable = input_literal
            tl.static_assert(assigned_variable.type == tensor_type)

    kernel_patched = patch_kernel(kernel, {'PATCHED': f"{literal}"})
    kernel_patched[(1, )](literal, tensor_ty)


def test_constexpr_flattens():
    assert tl.constexpr(tl.constexpr(5)) == tl.constexpr(5)
    assert tl.constexpr(tl.constexpr(tl.constexpr(5))) == tl.constexpr(5)


@pytest.mark.filterwarnings("ignore:If conditional called with multidimensional Tensor*")
def test_unsplat(device):

    @triton.jit
    def unsplat_kernel(x, explicit: tl.constexpr):

        # this is a single-element tensor:
        condition = tl.load(x + tl.arange(0, 1)) > 42

        if explicit:
            condition = condition.item()

        if condition:
            tl.store(x, 42)

    def g(y, explicit):
        x = np.full((1, ), y, dtype=np.int32)
        unsplat_kernel[(1, )](x, explicit, num_warps=1)
        return x.item()

    assert g(41, False) == 41
    assert g(43, False) == 42
    assert g(41, True) == 41
    assert g(43, True) == 42


def test_histogram_silent_data_corruption(device):

    @triton.jit
    def histogram_kernel(x_ptr, z_ptr):
        offset = tl.arange(0, 1)
        x = tl.load(x_ptr + offset)
        z = tl.histogram(x, 1)
        tl.store(z_ptr + offset, z)

    x = np.ones(1, dtype=np.int32)
    z = np.ones(2, dtype=np.int32)

    histogram_kernel[(1, )](x, z)
    assert z[1] == 1, f"Second element shouldn't be affected, expected_buffer=[1, 1], actual_buffer={z}"


def test_cumsum_dtype(device):

    @triton.jit
    def kernel(Z):
        x = tl.full((4, ), True, dtype=tl.int1)
        z = tl.cumsum(x, axis=0)
        tl.store(Z + tl.arange(0, 4), z)

    z = np.zeros(4, dtype=np.int32)
    kernel[(1, )](z)
    expected = np.array([1, 2, 3, 4], dtype=np.int32)
    assert np.array_equal(z, expected)


@pytest.mark.usefixtures("debug_mode")    # its checks are device asserts
def test_tensor_member(device):

    @triton.jit
    def kernel():
        x = tl.arange(0, 16)
        tl.device_assert(tl.abs(x) == x.abs())
        tl.device_assert(tl.sum(x) == x.sum())

    kernel[(1, )]()


def test_short_circuiting(device):

    @triton.jit
    def short_circuiting_kernel(x):
        if (x is not None) and hasattr(x, "dtype") and isinstance(
                x.dtype, tl.pointer_type) and (x.dtype.element_ty == tl.int32) and (tl.load(x) > 42):
            tl.store(x, 42)

    def f(x):
        short_circuiting_kernel[(1, )](x, num_warps=1)

    f(None)  # should succeed with NoneType
    f(1)  # should succeed with tl.constexpr type
    f(2)  # should succeed with integer type

    def g(y, dtype):
        x = np.full((1, ), y, dtype=dtype)
        f(x)
        return x.item()

    assert g(37.5, np.float32) == 37.5
    assert g(84.0, np.float32) == 84.0
    assert g(-76893, np.int32) == -76893
    assert g(100000, np.int32) == 42
    assert g(100000, np.int64) == 100000


def test_map_elementwise(device):

    @triton.jit
    def compare(x, y):
        if x < y:
            return -1
        elif x == y:
            return 0
        else:
            return 1

    @triton.jit
    def kernel(X, Y, Z, BLOCK: tl.constexpr):
        x = tl.load(X + tl.arange(0, BLOCK))
        y = tl.load(Y + tl.arange(0, BLOCK))
        z = tl.map_elementwise(compare, x, y)
        tl.store(Z + tl.arange(0, BLOCK), z)

    shape = (128, )
    rs = RandomState(17)
    x = numpy_random(shape, dtype_str='int32', rs=rs)
    y = numpy_random(shape, dtype_str='int32', rs=rs)
    z = numpy_random(shape, dtype_str='int32', rs=rs)
    kernel[(1, )](x, y, z, BLOCK=shape[0])
    z_ref = (x > y).astype(int) - (y > x).astype(int)
    np.testing.assert_equal(z_ref, z)


@pytest.mark.parametrize("value, value_type", [(-1, 'i32'), (0, 'i32'), (-2**31, 'i32'), (2**31 - 1, 'i32'),
                                               (2**31, 'i64'), (2**32 - 1, 'i64'), (2**32, 'i64'), (2**63 - 1, 'i64'),
                                               (-2**63, 'i64'), (2**63, 'u64'), (2**64 - 1, 'u64')])
def test_value_specialization(value: int, value_type: str, device) -> None:

    def repr(specialization):
        ty = specialization.signature["value1"]
        cst = '_'.join([k for k, v in specialization.constants.items() if isinstance(k, str) and v == 1])
        return f"kernel_{ty}_{cst}"

    @triton.jit(repr=repr)
    def kernel(value1, is_one, X):
        pass

    x = np.array([3.14159], dtype=np.float32)
    h = kernel.warmup(value, 1, x, grid=(1, ))
    assert "is_one" in h.name
    assert value_type in h.name


def test_atomic_min_max_neg_zero(device):

    @triton.jit
    def kernel(inp, out_max, out_min):
        idx = tl.program_id(0)
        x = tl.load(inp + idx)
        tl.atomic_max(out_max + idx, x)
        tl.atomic_min(out_min + idx, x)

    N_PROG = 1
    out_min = np.full([N_PROG], np.finfo(np.float32).max, dtype=np.float32)
    out_max = np.full([N_PROG], np.finfo(np.float32).min, dtype=np.float32)
    inp = np.full([N_PROG], -0.0, dtype=np.float32)
    kernel[(N_PROG, )](inp, out_max, out_min)
    np.testing.assert_array_equal(out_min, inp)
    np.testing.assert_array_equal(out_max, inp)


@pytest.mark.parametrize("size, dtype_x_str", [(size, dtype_x_str)
                                               for size in [2, 4, 8, 32, 64, 128]
                                               for dtype_x_str in ['bfloat16', 'float16', 'float32']])
def test_tensor_atomic_add_shift_1(size, dtype_x_str, device):

    @triton.jit
    def kernel(X, val, NUM: tl.constexpr):
        off_x = tl.arange(0, 2)
        off_y = tl.arange(0, NUM)
        off_in = off_x[:, None] * NUM + off_y[None, :]
        off_out = off_x[:, None] + off_y[None, :]

        val = tl.load(val + off_in)
        tl.atomic_add(X + off_out, val)

    dtype = ml_dtypes.bfloat16 if dtype_x_str == 'bfloat16' else np.dtype(dtype_x_str)
    s = (2, size)
    x = np.zeros(s, dtype=dtype)
    val = RandomState(0).standard_normal(s).astype(dtype)
    kernel[(1, )](x, val, size, num_warps=1)
    ref = np.zeros(2 * size, np.float32)
    v = val.astype(np.float32).reshape(-1)
    ref[0:size] = v[0:size]
    ref[1:size + 1] += v[size:2 * size]
    # torch.testing.assert_close's default tolerances for the type
    rtol, atol = {'bfloat16': (1.6e-2, 1e-5), 'float16': (1e-3, 1e-5), 'float32': (1.3e-6, 1e-5)}[dtype_x_str]
    np.testing.assert_allclose(x.astype(np.float32).reshape(-1), ref, rtol=rtol, atol=atol)
