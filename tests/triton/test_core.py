"""Triton's language tests (python/test/unit/language/test_core.py), ported to minitriton.

Source: triton-lang/triton at commit 0072ae0b3a4841bba3b75698d4d1b0edd0a96d38 (MIT licence).
The kernels are Triton's, unchanged; the host code is ours, on numpy instead of torch, and each
parametrization is reduced to representative points (tests/triton/README.md says which and
why).  The tests run as Triton runs them on its interpreter: `import triton` is minitriton.
"""
import re

import numpy as np
import pytest
from numpy.random import RandomState

import minitriton as triton                 # was: import triton
import minitriton.language as tl            # was: import triton.language as tl

from .helpers import (check_type_supported, dtypes, dtypes_with_bfloat16, float_dtypes, int_dtypes, integral_dtypes,
                      numpy_random, patch_kernel, to_numpy, to_triton, uint_dtypes, bitwidth)

# dtype pairs for the binary-operator tests: each type with itself, and crossings of width,
# signedness and kind (Triton's full product is 144 pairs per operator)
PAIRS = [(d, d) for d in dtypes] + [
    ("int8", "int64"), ("int16", "int32"), ("int32", "float32"), ("float16", "float32"), ("float16", "int32"),
    ("uint8", "int8"), ("int32", "uint32"), ("uint32", "int64"), ("float32", "float64"), ("int64", "float16"),
    ("uint64", "int64"), ("uint16", "float32"), ("int8", "uint16"), ("uint8", "uint32"), ("float64", "int8")]


# -- the shared unary and binary harness (host code ours; kernels Triton's) -------------------------
def _test_unary(dtype_x, expr, numpy_expr=None, device="cpu", num_ctas=1):
    check_type_supported(dtype_x, device)
    SIZE = 128

    @triton.jit
    def kernel(Z, X, SIZE: tl.constexpr):
        off = tl.arange(0, SIZE)
        x = tl.load(X + off)
        z = GENERATE_TEST_HERE
        tl.store(Z + off, z)

    kernel = patch_kernel(kernel, {'GENERATE_TEST_HERE': expr})
    x = numpy_random(SIZE, dtype_str=dtype_x)
    if 'log' in expr:
        x = np.abs(x) + 0.01
    z_ref = eval(expr if numpy_expr is None else numpy_expr)
    x_tri = to_triton(x, device=device, dst_type=dtype_x)
    z_tri = to_triton(np.empty_like(x), device=device, dst_type=dtype_x)
    kernel[(1, )](Z=z_tri, X=x_tri, SIZE=SIZE, num_warps=4, num_ctas=num_ctas)
    np.testing.assert_allclose(z_ref, to_numpy(z_tri), rtol=0.01)


# the type Triton gives a binary operation where numpy's differs (narrower floats; C's rules
# for mixed signed and unsigned integers)
_OVERRIDES = {**{("float16", t): np.float16 for t in ("int16", "int32", "int64", "uint16", "uint32", "uint64")},
              **{(s, u): getattr(np, u) for s in int_dtypes for u in uint_dtypes if bitwidth(u) >= bitwidth(s)}}


def _override(a, b):
    return _OVERRIDES.get((a, b)) or _OVERRIDES.get((b, a))


def _test_binary(dtype_x, dtype_y, expr, numpy_expr=None, mode_x='real', mode_y='real', device='cpu', num_ctas=1,
                 x_low=None, x_high=None, y_low=None, y_high=None, filter_y=None, test_broadcast=True,
                 test_scalar=True):
    check_type_supported(dtype_x, device)
    check_type_supported(dtype_y, device)
    SIZE = 128

    @triton.jit
    def kernel(Z, X, Y, SIZE: tl.constexpr):
        off = tl.arange(0, SIZE)
        x = tl.load(X + off)
        y = tl.load(Y + off)
        z = GENERATE_TEST_HERE
        tl.store(Z + off, z)

    @triton.jit
    def kernel_broadcast_lhs(Z, X, Y, SIZE: tl.constexpr):
        off = tl.arange(0, SIZE)
        x = tl.load(X)
        y = tl.load(Y + off)
        z = GENERATE_TEST_HERE
        tl.store(Z + off, z)

    @triton.jit
    def kernel_broadcast_rhs(Z, X, Y, SIZE: tl.constexpr):
        off = tl.arange(0, SIZE)
        x = tl.load(X + off)
        y = tl.load(Y)
        z = GENERATE_TEST_HERE
        tl.store(Z + off, z)

    @triton.jit
    def kernel_scalar_rhs(Z, X, y: tl.constexpr, SIZE: tl.constexpr):
        off = tl.arange(0, SIZE)
        x = tl.load(X + off)
        z = GENERATE_TEST_HERE
        tl.store(Z + off, z)

    swap = {'GENERATE_TEST_HERE': expr}
    kernel, kernel_broadcast_lhs, kernel_broadcast_rhs, kernel_scalar_rhs = (
        patch_kernel(k, swap) for k in (kernel, kernel_broadcast_lhs, kernel_broadcast_rhs, kernel_scalar_rhs))
    rs = RandomState(17)
    x = numpy_random(SIZE, dtype_str=dtype_x, rs=rs, low=x_low, high=x_high)
    y = numpy_random(SIZE, dtype_str=dtype_y, rs=rs, low=y_low, high=y_high)
    if filter_y:
        y[filter_y(y)] = 1
    if mode_x == 'nan':
        x[:] = float('nan')
    if mode_y == 'nan':
        y[:] = float('nan')

    def do_test(x, y, kernel_fn):
        scalar = isinstance(x, (bool, int, float)) or isinstance(y, (bool, int, float))
        if scalar:
            # a Python scalar takes the array's type (numpy 2's weak promotion), so drop the casts
            z_ref = eval(expr if numpy_expr is None else re.sub(r'\.astype\(np\.\w+\)', '', numpy_expr))
        else:
            z_ref = eval(expr if numpy_expr is None else numpy_expr)
            if _override(dtype_x, dtype_y) is not None:
                z_ref = z_ref.astype(_override(dtype_x, dtype_y))
        x_tri = x if isinstance(x, (bool, int, float)) else to_triton(x, device=device, dst_type=dtype_x)
        y_tri = y if isinstance(y, (bool, int, float)) else to_triton(y, device=device, dst_type=dtype_y)
        z_tri = to_triton(np.empty(SIZE, dtype=np.asarray(z_ref).dtype), device=device)
        kernel_fn[(1, )](z_tri, x_tri, y_tri, SIZE=SIZE, num_warps=4, num_ctas=num_ctas)
        np.testing.assert_allclose(z_ref, to_numpy(z_tri), err_msg=f"{expr}, {kernel_fn.__name__}", atol=7e-3,
                                   rtol=0.01)

    def scalar_of(values, dtype, low, high, keep_out):
        if dtype in integral_dtypes:          # small, so that it converts to the other type
            lo = 0 if dtype in uint_dtypes else -7
            lo = lo if low is None else max(lo, low)
            hi = 7 if high is None else min(7, high)
            s = numpy_random((), dtype_str=dtype, rs=rs, low=lo, high=hi).item()
            return 4 if keep_out and keep_out(s) else s
        return values.flat[0].item()

    do_test(x, y, kernel)
    if mode_y != 'nan' and test_scalar:
        low = (0 if y_low is None else max(y_low, 0)) if dtype_x in uint_dtypes else y_low
        do_test(x, scalar_of(y, dtype_y, low, y_high, filter_y), kernel_scalar_rhs)
    if test_broadcast:
        do_test(x[:1].reshape(()), y, kernel_broadcast_lhs)
        do_test(x, y[:1].reshape(()), kernel_broadcast_rhs)


def _mod_operand_range(dtype_x, dtype_y):
    """Integer operands small enough to convert exactly to the float operand of a %."""
    narrow = max(min(bitwidth(dtype_x), bitwidth(dtype_y), 32) >> 1, 8)
    kind = "uint" if dtype_x in uint_dtypes else "int"
    info = np.iinfo(getattr(np, f"{kind}{narrow}"))
    return (info.min, info.max // 4) if narrow >= 16 and kind == "uint" else (info.min, info.max)


# -- kernels with nothing in them, and dtypes -----------------------------------------------------------
@pytest.mark.parametrize("dtype_x", list(dtypes) + ["bfloat16"])
def test_empty_kernel(dtype_x, device):
    SIZE = 128

    @triton.jit
    def kernel(X, SIZE: tl.constexpr):
        pass

    check_type_supported(dtype_x, device)
    x = to_triton(numpy_random(SIZE, dtype_str=dtype_x), device=device, dst_type=dtype_x)
    kernel[(1, )](x, SIZE=SIZE, num_warps=4)


def test_scalar_overflow(device):

    @triton.jit
    def kernel():
        huge_int: tl.constexpr = 0xFFFFFFFFFFFFFF
        x = tl.full((), 32, dtype=tl.int32)
        y = x + huge_int

    with pytest.raises(triton.TritonError, match="out of range"):
        kernel[(1, )]()


def test_dtype_codegen():
    for dtype in dtypes_with_bfloat16:
        assert repr(getattr(tl, dtype)) == f"triton.language.{dtype}"


# -- binary operators ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype_x, dtype_y, op", [(x, y, op) for op in ['+', '-', '*', '/', '%'] for x, y in PAIRS])
def test_bin_op(dtype_x, dtype_y, op, device):
    expr = f'x {op} y'
    np_expr_gen = (lambda x, y: f'{x} {op} {y}') if op != '%' else (lambda x, y: f'np.fmod({x}, {y})')

    def promote_to_fp32(a, b):
        return a in ('float16', 'bfloat16') and b not in ('float32', 'float64')

    if op in ('/', '%') and (promote_to_fp32(dtype_x, dtype_y) or promote_to_fp32(dtype_y, dtype_x)):
        numpy_expr = np_expr_gen('x.astype(np.float32)', 'y.astype(np.float32)')
    elif dtype_x in uint_dtypes and dtype_y in int_dtypes and bitwidth(dtype_x) >= bitwidth(dtype_y):
        numpy_expr = np_expr_gen(f'x.astype(np.{dtype_x})', f'y.astype(np.{dtype_x})')
    elif dtype_y in uint_dtypes and dtype_x in int_dtypes and bitwidth(dtype_y) >= bitwidth(dtype_x):
        numpy_expr = np_expr_gen(f'x.astype(np.{dtype_y})', f'y.astype(np.{dtype_y})')
    elif op == '%':
        numpy_expr = np_expr_gen('x', 'y')
    else:
        numpy_expr = None
    if op in ('%', '/') and ((dtype_x in int_dtypes and dtype_y in uint_dtypes) or
                             (dtype_x in uint_dtypes and dtype_y in int_dtypes)):
        with pytest.raises(triton.TritonError, match='Cannot use .* because they have different signedness'):
            _test_binary(dtype_x, dtype_y, expr, numpy_expr, device=device)
        return
    skip_scalar = op in ('/', '%') and dtype_x in ("float16", "bfloat16")
    not_zero = op in ('/', '%') and dtype_x in integral_dtypes and dtype_y in integral_dtypes
    not_minus_one = op in ('*', '/') and dtype_x in int_dtypes and dtype_y in int_dtypes
    filter_y = (lambda y: not_zero * (y == 0) | not_minus_one * (y == -1)) if not_zero or not_minus_one else None
    if op == "%" and dtype_x in integral_dtypes and dtype_y in float_dtypes:
        x_low, x_high = _mod_operand_range(dtype_x, dtype_y)
    else:
        x_low, x_high = None, None
    _test_binary(dtype_x, dtype_y, expr, numpy_expr, device=device, test_broadcast=(op != "%"), x_low=x_low,
                 x_high=x_high, filter_y=filter_y, test_scalar=not skip_scalar)


@pytest.mark.parametrize("dtype, order", [(dtype, order) for dtype in dtypes_with_bfloat16 for order in [0, 1]])
def test_addptr(dtype, order, device):
    check_type_supported(dtype, device)

    @triton.jit
    def kernel(x, y, ORDER: tl.constexpr, SIZE: tl.constexpr):
        offs = tl.arange(0, SIZE)
        if ORDER == 0:
            tl.store(y + offs, tl.load(x + offs))
        else:
            tl.store(offs + y, tl.load(offs + x))

    SIZE = 1024
    rs = RandomState(17)
    x = numpy_random(SIZE, dtype_str=dtype, rs=rs)
    y = numpy_random(SIZE, dtype_str=dtype, rs=rs)
    x_tri, y_tri = to_triton(x, dst_type=dtype), to_triton(y, dst_type=dtype)
    kernel[1, ](x_tri, y_tri, order, SIZE)
    np.testing.assert_allclose(x, to_numpy(y_tri))


@pytest.mark.parametrize("dtype_x, dtype_y", [("int8", "int8"), ("int16", "int64"), ("int32", "int32"), ("int64", "int8"),
                                              ("uint8", "uint8"), ("uint16", "uint64"), ("uint32", "uint32"),
                                              ("uint64", "uint16")])
def test_floordiv(dtype_x, dtype_y, device):
    expr = 'x // y'
    numpy_expr = '((x - np.fmod(x, y)) / y)'
    filter_y = (lambda y: y == -1) if dtype_x in int_dtypes and dtype_y in int_dtypes else None
    _test_binary(dtype_x, dtype_y, expr, numpy_expr, filter_y=filter_y, device=device)


def test_unsigned_name_mangling(device):
    SIZE = 128

    @triton.jit
    def kernel(O1, O2, X, Y, SIZE: tl.constexpr):
        off = tl.arange(0, SIZE)
        x = tl.load(X + off)
        y = tl.load(Y + off)
        out1 = tl.abs(x)  # uint32 -> nop
        out2 = tl.abs(-y)  # int32 -> should have an effect
        tl.store(O1 + off, out1)
        tl.store(O2 + off, out2)

    rs = RandomState(17)
    x = numpy_random(SIZE, dtype_str='uint32', rs=rs)
    y = numpy_random(SIZE, dtype_str='int32', rs=rs)
    expect = (np.abs(x), np.abs(-y))
    actual = tuple(np.empty_like(e) for e in expect)
    kernel[(1, )](actual[0], actual[1], x, y, SIZE=SIZE, num_warps=4)
    assert (expect[0] == actual[0]).all() and (expect[1] == actual[1]).all()


@pytest.mark.parametrize("dtype_x, dtype_y, op", [(x, y, op) for op in ['&', '|', '^'] for x, y in PAIRS])
def test_bitwise_op(dtype_x, dtype_y, op, device):
    expr = f'x {op} y'
    if dtype_x in uint_dtypes and dtype_y in int_dtypes and bitwidth(dtype_x) >= bitwidth(dtype_y):
        numpy_expr = f'x.astype(np.{dtype_x}) {op} y.astype(np.{dtype_x})'
    elif dtype_y in uint_dtypes and dtype_x in int_dtypes and bitwidth(dtype_y) >= bitwidth(dtype_x):
        numpy_expr = f'x.astype(np.{dtype_y}) {op} y.astype(np.{dtype_y})'
    else:
        numpy_expr = None
    if 'float' in dtype_x + dtype_y:
        with pytest.raises(triton.TritonError, match='invalid operands of type'):
            _test_binary(dtype_x, dtype_y, expr, numpy_expr='np.array([])', device=device)
    else:
        _test_binary(dtype_x, dtype_y, expr, numpy_expr, device=device)


@pytest.mark.parametrize("dtype_x, dtype_y, op", [(x, y, op) for op in ['<<', '>>']
                                                  for x, y in [("int8", "uint8"), ("int32", "uint32"), ("int64", "uint16"),
                                                               ("uint8", "uint64"), ("uint32", "uint32"), ("int16", "uint64")]])
def test_shift_op(dtype_x, dtype_y, op, device):
    expr = f'x {op} y'
    bw = max(bitwidth(dtype_x), bitwidth(dtype_y))
    dtype_z = f'int{bw}' if dtype_x.startswith('int') else f'uint{bw}'
    numpy_expr = f'x.astype(np.{dtype_z}) {op} y.astype(np.{dtype_z})'
    _test_binary(dtype_x, dtype_y, expr, numpy_expr, device=device, y_low=0, y_high=bw)


@pytest.mark.parametrize("dtype_x, dtype_y, op, mode_x, mode_y",
                         [(x, y, op, 'real', 'real') for op in ['==', '!=', '>', '<', '>=', '<='] for x, y in PAIRS[::2]] +
                         [('float32', 'float32', op, mx, my) for op in ['==', '!=', '>', '<', '>=', '<=']
                          for mx, my in [('nan', 'real'), ('real', 'nan'), ('nan', 'nan')]])
def test_compare_op(dtype_x, dtype_y, op, mode_x, mode_y, device):
    expr = f'x {op} y'
    if dtype_x in uint_dtypes and dtype_y in int_dtypes and bitwidth(dtype_x) >= bitwidth(dtype_y):
        numpy_expr = f'x.astype(np.{dtype_x}) {op} y.astype(np.{dtype_x})'
    elif dtype_y in uint_dtypes and dtype_x in int_dtypes and bitwidth(dtype_y) >= bitwidth(dtype_x):
        numpy_expr = f'x.astype(np.{dtype_y}) {op} y.astype(np.{dtype_y})'
    else:
        numpy_expr = None
    _test_binary(dtype_x, dtype_y, expr, numpy_expr, mode_x=mode_x, mode_y=mode_y, device=device)


# -- broadcast, slices, expand_dims, program ids ---------------------------------------------------------
@pytest.mark.parametrize("dtype", dtypes_with_bfloat16)
def test_broadcast(dtype, device):
    check_type_supported(dtype, device)

    @triton.jit
    def broadcast_kernel(x_ptr, y_ptr, y_broadcasted_ptr, M: tl.constexpr, N: tl.constexpr):
        offset1 = tl.arange(0, M)
        offset2 = tl.arange(0, N)
        x = tl.load(x_ptr + N * offset1[:, None] + offset2[None, :])
        y = tl.load(y_ptr + offset2)
        _, y_broadcasted = tl.broadcast(x, y)
        tl.store(y_broadcasted_ptr + N * offset1[:, None] + offset2[None, :], y_broadcasted)

    M, N = 32, 64
    rs = RandomState(17)
    x = numpy_random((M, N), dtype_str=dtype, rs=rs)
    y = numpy_random(N, dtype_str=dtype, rs=rs)
    _, y_broadcasted_np = np.broadcast_arrays(x, y)
    out = np.empty((M, N), dtype=y_broadcasted_np.dtype)
    broadcast_kernel[(1, )](x, y, out, M=M, N=N)
    assert (y_broadcasted_np == out).all()


def test_slice(device):

    @triton.jit
    def slice_kernel(XBLOCK: tl.constexpr):
        data = tl.arange(0, XBLOCK)
        tl.static_assert(data.shape == [XBLOCK])

        t = data[None, :]
        tl.static_assert(t.shape == [1, XBLOCK])

        t = data[None, :, None]
        tl.static_assert(t.shape == [1, XBLOCK, 1])

        scalar = tl.full([], 1, tl.int32)
        tl.static_assert(scalar.shape == [])

        t = scalar[None]
        tl.static_assert(t.shape == [1])

        t = scalar[None, None]
        tl.static_assert(t.shape == [1, 1])

    slice_kernel[(1, )](XBLOCK=32)


def test_invalid_slice(device):
    dst = np.empty(128, np.float32)

    @triton.jit
    def _kernel(dst):
        dst[10:]

    with pytest.raises(triton.TritonError, match='unsupported tensor index'):
        _kernel[(1, )](dst=dst)


def test_expand_dims(device):

    @triton.jit
    def expand_dims_kernel(dummy, N: tl.constexpr):
        offset1 = tl.arange(0, N)

        t = tl.expand_dims(offset1, 0)
        tl.static_assert(t.shape == [1, N])

        t = tl.expand_dims(offset1, 1)
        tl.static_assert(t.shape == [N, 1])

        t = tl.expand_dims(offset1, -1)
        tl.static_assert(t.shape == [N, 1])

        t = tl.expand_dims(offset1, -2)
        tl.static_assert(t.shape == [1, N])

        t = tl.expand_dims(offset1, (0, -1))
        tl.static_assert(t.shape == [1, N, 1])

        t = tl.expand_dims(offset1, (0, 1, 3))
        tl.static_assert(t.shape == [1, 1, N, 1])

        t = tl.expand_dims(offset1, (-4, 2, -1))
        tl.static_assert(t.shape == [1, N, 1, 1])

        t = tl.expand_dims(offset1, (3, 1, 2))
        tl.static_assert(t.shape == [N, 1, 1, 1])

        scalar = tl.sum(offset1)
        tl.static_assert(scalar.shape == [])
        t = tl.expand_dims(scalar, 0)
        tl.static_assert(t.shape == [1])

        t = tl.expand_dims(scalar, -1)
        tl.static_assert(t.shape == [1])

        # N is a scalar that's not even a tl.tensor -- this should work too.
        t = tl.expand_dims(N, -1)
        tl.static_assert(t.shape == [1])

    expand_dims_kernel[(1, )](np.empty((), np.float32), 32)


def test_expand_dims_error_cases(device):

    @triton.jit
    def dim_out_of_range1(dummy, N: tl.constexpr):
        offset1 = tl.arange(0, N)

        t = tl.expand_dims(offset1, -2)
        t = tl.expand_dims(offset1, -3)

    @triton.jit
    def dim_out_of_range2(dummy, N: tl.constexpr):
        offset1 = tl.arange(0, N)

        t = tl.expand_dims(offset1, 1)
        t = tl.expand_dims(offset1, 2)

    @triton.jit
    def dim_out_of_range3(dummy, N: tl.constexpr):
        offset1 = tl.arange(0, 1)
        scalar = tl.sum(offset1)

        t = tl.expand_dims(scalar, 1)

    @triton.jit
    def duplicate_dim1(dummy, N: tl.constexpr):
        offset1 = tl.arange(0, N)

        t = tl.expand_dims(offset1, (0, 0))

    @triton.jit
    def duplicate_dim2(dummy, N: tl.constexpr):
        offset1 = tl.arange(0, N)

        t = tl.expand_dims(offset1, (0, -3))

    dummy = np.empty((), np.float32)
    for kernel, message in [(dim_out_of_range1, r"invalid axis -3"), (dim_out_of_range2, r"invalid axis 2"),
                            (dim_out_of_range3, r"invalid axis 1"),
                            (duplicate_dim1, r"duplicate axes, normalized axes = \[0, 0\]"),
                            (duplicate_dim2, r"duplicate axes, normalized axes = \[0, 0\]")]:
        with pytest.raises(triton.TritonError) as exc_info:
            kernel[(1, )](dummy, 32)
        assert re.search(message, str(exc_info.value.__cause__))


def test_invalid_pid_axis(device):
    dst = np.empty(128, np.float32)

    @triton.jit
    def _kernel(dst):
        pid = tl.program_id(20)

    with pytest.raises(triton.TritonError) as exc_info:
        _kernel[(1, )](dst)
    assert re.search(r"program_id axis must be 0, 1, or 2 but got 20", str(exc_info.value.__cause__))
