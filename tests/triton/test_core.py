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

from .helpers import (check_type_supported, dtypes, dtypes_with_bfloat16, float_dtypes, float_dtypes_with_bfloat16,
                      int_dtypes, integral_dtypes,
                      make_ptr_str, numpy_random, patch_kernel, to_numpy, to_triton, uint_dtypes, bitwidth)

# dtype pairs for the binary-operator tests: Triton's full product, every type (bfloat16 too) with
# every other, 144 pairs per operator (about 15 s of CI in all)
PAIRS = [(x, y) for x in dtypes_with_bfloat16 for y in dtypes_with_bfloat16]


# -- the shared unary and binary harness (host code ours; kernels Triton's) -------------------------
def run_unary(dtype_x, expr, numpy_expr=None, device="cpu", num_ctas=1):
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


def run_binary(dtype_x, dtype_y, expr, numpy_expr=None, mode_x='real', mode_y='real', device='cpu', num_ctas=1,
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
            run_binary(dtype_x, dtype_y, expr, numpy_expr, device=device)
        return
    skip_scalar = op in ('/', '%') and dtype_x in ("float16", "bfloat16")
    not_zero = op in ('/', '%') and dtype_x in integral_dtypes and dtype_y in integral_dtypes
    not_minus_one = op in ('*', '/') and dtype_x in int_dtypes and dtype_y in int_dtypes
    filter_y = (lambda y: not_zero * (y == 0) | not_minus_one * (y == -1)) if not_zero or not_minus_one else None
    if op == "%" and dtype_x in integral_dtypes and dtype_y in float_dtypes_with_bfloat16:
        x_low, x_high = _mod_operand_range(dtype_x, dtype_y)
    else:
        x_low, x_high = None, None
    run_binary(dtype_x, dtype_y, expr, numpy_expr, device=device, test_broadcast=(op != "%"), x_low=x_low,
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
    run_binary(dtype_x, dtype_y, expr, numpy_expr, filter_y=filter_y, device=device)


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
            run_binary(dtype_x, dtype_y, expr, numpy_expr='np.array([])', device=device)
    else:
        run_binary(dtype_x, dtype_y, expr, numpy_expr, device=device)


@pytest.mark.parametrize("dtype_x, dtype_y, op", [(x, y, op) for op in ['<<', '>>']
                                                  for x in integral_dtypes for y in uint_dtypes])
def test_shift_op(dtype_x, dtype_y, op, device):
    expr = f'x {op} y'
    bw = max(bitwidth(dtype_x), bitwidth(dtype_y))
    dtype_z = f'int{bw}' if dtype_x.startswith('int') else f'uint{bw}'
    numpy_expr = f'x.astype(np.{dtype_z}) {op} y.astype(np.{dtype_z})'
    run_binary(dtype_x, dtype_y, expr, numpy_expr, device=device, y_low=0, y_high=bw)


@pytest.mark.parametrize("dtype_x, dtype_y, op, mode_x, mode_y",
                         [(x, y, op, 'real', 'real') for op in ['==', '!=', '>', '<', '>=', '<='] for x, y in PAIRS] +
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
    run_binary(dtype_x, dtype_y, expr, numpy_expr, mode_x=mode_x, mode_y=mode_y, device=device)


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


# -- where, unary and math operators -----------------------------------------------------------------------
NOT_AN_ADDRESS = pytest.mark.xfail(strict=True, reason="minitriton maps an integer cast to a pointer onto the array "
                                    "holding that address; random integers are in none, and come back as 0")


@pytest.mark.parametrize("dtype", dtypes_with_bfloat16 + [pytest.param("*int32", marks=NOT_AN_ADDRESS)])
def test_where(dtype, device):
    select_ptrs = False
    if dtype == "*int32":
        dtype = "int64"
        select_ptrs = True
    check_type_supported(dtype, device)

    @triton.jit
    def where_kernel(cond_ptr, a_ptr, b_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr,
                     TEST_POINTERS: tl.constexpr, TEST_SCALAR_POINTERS: tl.constexpr):
        offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n_elements
        decide = tl.load(cond_ptr + offsets, mask=mask)
        if TEST_SCALAR_POINTERS:
            ptr = tl.where(tl.load(cond_ptr), a_ptr, b_ptr)
            output = tl.load(ptr + offsets, mask=mask)
        else:
            if TEST_POINTERS:
                a = tl.load(a_ptr + offsets, mask=mask).to(tl.pi32_t)
                b = tl.load(b_ptr + offsets, mask=mask).to(tl.pi32_t)
            else:
                a = tl.load(a_ptr + offsets, mask=mask)
                b = tl.load(b_ptr + offsets, mask=mask)
            output = tl.where(decide, a, b)
        tl.store(output_ptr + offsets, output, mask=mask)

    SIZE = 1_000
    rs = RandomState(17)
    cond = numpy_random(SIZE, 'bool', rs)
    x = numpy_random(SIZE, dtype_str=dtype, rs=rs)
    y = numpy_random(SIZE, dtype_str=dtype, rs=rs)
    z = np.where(cond, x, y)
    z_tri = np.empty(SIZE, dtype=z.dtype)
    grid = lambda meta: (triton.cdiv(SIZE, meta['BLOCK_SIZE']), )
    where_kernel[grid](cond, x, y, z_tri, SIZE, BLOCK_SIZE=1024, TEST_POINTERS=select_ptrs, TEST_SCALAR_POINTERS=False)
    assert (z == z_tri).all()
    if select_ptrs:
        where_kernel[grid](cond, x, y, z_tri, SIZE, BLOCK_SIZE=1024, TEST_POINTERS=select_ptrs,
                           TEST_SCALAR_POINTERS=True)
        assert (np.where(cond[0], x, y) == z_tri).all()


def test_where_broadcast(device):

    @triton.jit
    def where_kernel(cond_ptr, a_ptr, out_ptr, BLOCK_SIZE: tl.constexpr):
        xoffsets = tl.arange(0, BLOCK_SIZE)[:, None]
        yoffsets = tl.arange(0, BLOCK_SIZE)[None, :]

        mask = tl.load(cond_ptr + yoffsets)
        vals = tl.load(a_ptr + yoffsets + BLOCK_SIZE * xoffsets)
        res = tl.where(mask, vals, 0.)
        tl.store(out_ptr + yoffsets + BLOCK_SIZE * xoffsets, res)

    @triton.jit
    def where_scalar_condition(a_ptr, out_ptr, BLOCK_SIZE: tl.constexpr):
        xoffsets = tl.arange(0, BLOCK_SIZE)[:, None]
        yoffsets = tl.arange(0, BLOCK_SIZE)[None, :]
        mask = False
        vals = tl.load(a_ptr + yoffsets + BLOCK_SIZE * xoffsets)
        res = tl.where(mask, vals, 0.)
        tl.store(out_ptr + yoffsets + BLOCK_SIZE * xoffsets, res)

    SIZE = 32
    rs = RandomState(17)
    x = numpy_random((SIZE, SIZE), dtype_str='float32', rs=rs)
    mask = numpy_random(SIZE, 'bool', rs=rs)
    z_tri = np.empty((SIZE, SIZE), np.float32)
    where_kernel[(1, )](mask, x, z_tri, SIZE)
    assert (np.where(mask, x, 0) == z_tri).all()
    where_scalar_condition[(1, )](x, z_tri, SIZE)
    assert (np.where(0, x, 0) == z_tri).all()


@pytest.mark.parametrize("dtype_x, expr", [(d, ' -x') for d in dtypes_with_bfloat16] + [(d, ' ~x') for d in int_dtypes])
def test_unary_op(dtype_x, expr, device):
    run_unary(dtype_x, expr, device=device)


@pytest.mark.parametrize("dtype_x, expr, x", [(d, expr, x) for d in ["float32", "float64"]
                                              for expr in ['exp', 'log', 'cos', 'sin', 'exp2', 'log2', 'sqrt', 'floor',
                                                           'ceil'] for x in ['x', '3.0']])
def test_math_op(dtype_x, expr, x, device):
    run_unary(dtype_x, f'tl.{expr}({x})', f'np.{expr}({x}) ', device=device)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_math_erf_op(dtype, device):
    SIZE = 128

    @triton.jit
    def kernel(Z, X, SIZE: tl.constexpr):
        off = tl.arange(0, SIZE)
        x = tl.load(X + off)
        z = tl.math.erf(x)
        tl.store(Z + off, z)

    import math
    x = np.random.default_rng(0).standard_normal(SIZE).astype(dtype)
    z_tri = np.zeros_like(x)
    kernel[(1, )](z_tri, x, SIZE=SIZE, num_warps=4)
    np.testing.assert_allclose(z_tri, np.array([math.erf(v) for v in x.astype(float)], dtype),
                               rtol=1.3e-6 if dtype == "float32" else 1e-7, atol=1e-5 if dtype == "float32" else 1e-7)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_math_fma_op(dtype, device):
    SIZE = 128

    @triton.jit
    def kernel(Z, X, Y, W, SIZE: tl.constexpr):
        off = tl.arange(0, SIZE)
        x = tl.load(X + off)
        y = tl.load(Y + off)
        w = tl.load(W + off)
        z = tl.math.fma(x, y, w)
        tl.store(Z + off, z)

    x, y, w = np.random.default_rng(1).standard_normal((3, SIZE)).astype(dtype)
    z_tri = np.zeros_like(x)
    kernel[(1, )](z_tri, x, y, w, SIZE=SIZE, num_warps=4)
    np.testing.assert_allclose(z_tri, x * y + w, rtol=1.3e-6 if dtype == "float32" else 1e-7, atol=1e-5)


@pytest.mark.parametrize("expr", ["tl.math.fdiv(x, y)", "tl.math.div_rn(x, y)"])
def test_math_divide_op(expr, device):
    run_binary("float32", "float32", expr, "x / y", device=device)


@pytest.mark.parametrize("expr_prec, expr_ref",
                         [('tl.math.sqrt_rn(x)', 'tl.math.sqrt(x.to(tl.float64)).to(tl.float32)'),
                          ('tl.math.div_rn(x,y)', '(x.to(tl.float64) / y.to(tl.float64)).to(tl.float32)')])
def test_precise_math(expr_prec, expr_ref, device):

    @triton.jit
    def kernel(X, Y, OUT, OUT_REF, BLOCK: tl.constexpr):
        x = tl.load(X + tl.arange(0, BLOCK))
        y = tl.load(Y + tl.arange(0, BLOCK))
        prec = PREC_CALC
        ref = REF_CALC
        tl.store(OUT + tl.arange(0, BLOCK), prec)
        tl.store(OUT_REF + tl.arange(0, BLOCK), ref)

    shape = (128, )
    out, out_ref = np.zeros(shape, np.float32), np.zeros(shape, np.float32)
    x, y = np.random.default_rng(2).standard_normal((2, 128)).astype(np.float32)
    if expr_prec.count('sqrt') > 0:
        x = np.abs(x)
    if expr_prec.count('div') > 0:
        y += 1e-6
    kernel = patch_kernel(kernel, {'PREC_CALC': expr_prec, 'REF_CALC': expr_ref})
    kernel[(1, )](x, y, out, out_ref, BLOCK=shape[0])
    assert (out == out_ref).all()  # bitwise exact


@pytest.mark.parametrize("dtype_x", dtypes_with_bfloat16)
def test_abs(dtype_x, device):
    run_unary(dtype_x, 'tl.abs(x)', 'np.abs(x) ', device=device)


def test_shapes_as_params(device):

    @triton.jit
    def kernel():
        a = tl.arange(0, 32).expand_dims(-1).broadcast_to(32, 32)
        tl.static_assert(a.shape == [tl.constexpr(32), tl.constexpr(32)])

        a = tl.arange(0, 32).reshape(4, 8).permute(1, 0)
        tl.static_assert(a.shape == [tl.constexpr(8), tl.constexpr(4)])

        a = tl.arange(0, 32).reshape(4, 8).trans()
        tl.static_assert(a.shape == [tl.constexpr(8), tl.constexpr(4)])

        a = tl.arange(0, 32).reshape(4, 8).reshape(32)
        tl.static_assert(a.shape == [tl.constexpr(32)])

        a = tl.arange(0, 64).reshape(2, 4, 8).trans(2, 1, 0)
        tl.static_assert(a.shape == [tl.constexpr(8), tl.constexpr(4), tl.constexpr(2)])

        a = tl.arange(0, 64).reshape(2, 4, 8).trans((2, 1, 0))
        tl.static_assert(a.shape == [tl.constexpr(8), tl.constexpr(4), tl.constexpr(2)])

        a = tl.arange(0, 64).view(2, 4, 8)
        tl.static_assert(a.shape == [tl.constexpr(2), tl.constexpr(4), tl.constexpr(8)])

    kernel[(1, )]()


@pytest.mark.parametrize("dtype_x", dtypes_with_bfloat16)
def test_transpose(dtype_x, device):
    check_type_supported(dtype_x, device)
    SIZE = 128

    @triton.jit
    def kernel(Z, X, SIZE: tl.constexpr):
        off = tl.arange(0, SIZE)
        off2d = off[None, :] + (tl.arange(0, 2) * SIZE)[:, None]
        x = tl.load(X + off2d)
        z = x.T
        tl.store(Z + off2d.T, z)

    x = numpy_random([SIZE, 2], dtype_str=dtype_x)
    z_ref = x.T
    z_tri = np.empty_like(z_ref)
    kernel[(1, )](z_tri, x, SIZE=SIZE)
    np.testing.assert_allclose(z_ref, z_tri)


@pytest.mark.parametrize("expr, dtype_str", [(f'x[{s}]', d) for s in ['None, :', ':, None', 'None, :, :', ':, :, None']
                                             for d in ['int32', 'uint32', 'uint16']])
def test_index1d(expr, dtype_str, device):
    rank_x = expr.count(':')
    rank_y = expr.count(',') + 1
    shape_x = [32 for _ in range(rank_x)]
    shape_z = [32 for _ in range(rank_y)]
    shape_z_rank_mismatch = [32 for _ in range(rank_y + 1)]
    shape_z_dim_mismatch = [64 for _ in range(rank_y)]

    @triton.jit
    def kernel(Z, X, SIZE: tl.constexpr):
        m = tl.arange(0, SIZE)
        n = tl.arange(0, SIZE)
        x = tl.load(X_PTR_EXPR)
        z = GENERATE_TEST_HERE
        tl.store(Z_PTR_EXPR, z)

    def generate_kernel(shape_x, shape_z):
        return patch_kernel(kernel, {'X_PTR_EXPR': make_ptr_str('X', shape_x), 'Z_PTR_EXPR': make_ptr_str('Z', shape_z),
                                     'GENERATE_TEST_HERE': expr})

    x = numpy_random(shape_x, dtype_str=dtype_str)
    z_ref = eval(expr) + np.zeros(shape_z, dtype=getattr(np, dtype_str))
    z_tri = np.empty_like(z_ref)
    generate_kernel(shape_x, shape_z)[(1, )](z_tri, x, num_warps=1, SIZE=shape_x[0])
    assert (z_ref == z_tri).all()
    for bad in (generate_kernel(shape_x, shape_z_dim_mismatch), generate_kernel(shape_x, shape_z_rank_mismatch)):
        with pytest.raises(triton.CompilationError):
            bad[(1, )](z_tri, x, num_warps=1, SIZE=shape_x[0])


# -- functions: tuples, noinline ------------------------------------------------------------------------------
@triton.jit
def tuples_fn(a, b):
    return a + b, \
        a - b, \
        a * b


def test_tuples(device):

    @triton.jit
    def with_fn(X, Y, A, B, C):
        x = tl.load(X)
        y = tl.load(Y)
        a, b, c = tuples_fn(x, y)
        tl.store(A, a)
        tl.store(B, b)
        tl.store(C, c)

    @triton.jit
    def without_fn(X, Y, A, B, C):
        x = tl.load(X)
        y = tl.load(Y)
        a, b, c = x + y, x - y, x * y
        tl.store(A, a)
        tl.store(B, b)
        tl.store(C, c)

    x, y = np.array([1.3], np.float32), np.array([1.9], np.float32)
    for kernel in [with_fn, without_fn]:
        a_tri, b_tri, c_tri = (np.zeros(1, np.float32) for _ in range(3))
        kernel[(1, )](x, y, a_tri, b_tri, c_tri, num_warps=1)
        assert a_tri == x + y and b_tri == x - y and c_tri == x * y


@triton.jit(noinline=True)
def noinline_simple_fn(x, y, Z):
    z = x + y
    tl.store(Z, z)


@triton.jit(noinline=True)
def noinline_call_graph_fn1(x):
    return x + 1


@triton.jit(noinline=True)
def noinline_call_graph_fn2(y):
    return y + 2


@triton.jit(noinline=True)
def noinline_call_graph_fn(x, y, Z):
    t0 = noinline_call_graph_fn1(x)
    t1 = noinline_call_graph_fn2(y)
    z = t0 + t1
    tl.store(Z, z)


@triton.jit(noinline=True)
def noinline_shared_fn(x, y, Z):
    offs = tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :]
    z = tl.load(Z + offs)
    z = tl.dot(z, z) + x + y
    tl.store(Z + offs, z)


@triton.jit(noinline=True)
def noinline_dynamic_fn(x, y, Z):
    if x >= 1:
        x = noinline_call_graph_fn1(x)
    else:
        x = noinline_call_graph_fn2(x)
    if y >= 2:
        y = noinline_call_graph_fn2(y)
    else:
        y = noinline_call_graph_fn1(y)
    z = x + y
    tl.store(Z, z)


@triton.jit(noinline=True)
def noinline_call_multi_values_fn(x, y):
    return x + 1, y + 2


@triton.jit(noinline=True)
def noinline_multi_values_fn(x, y, Z):
    x, y = noinline_call_multi_values_fn(x, y)
    z = x + y
    tl.store(Z, z)


@pytest.mark.parametrize("mode", ["simple", "call_graph", "shared", "dynamic", "multi_values"])
def test_noinline(mode, device):

    @triton.jit
    def kernel(X, Y, Z):
        x = tl.load(X)
        y = tl.load(Y)
        GENERATE_TEST_HERE(x, y, Z)

    kernel = patch_kernel(kernel, {'GENERATE_TEST_HERE': f'noinline_{mode}_fn'})
    x, y = np.array([1.0], np.float32), np.array([2.0], np.float32)
    z = np.ones((16, 16), np.float32) if mode == "shared" else np.zeros(1, np.float32)
    kernel[(1, )](x, y, z, num_warps=1)
    if mode == "simple":
        assert (z == x + y).all()
    elif mode == "shared":
        assert (z == np.full((16, 16), 16, np.float32) + x + y).all()
    else:
        assert (z == x + 1 + y + 2).all()


# -- atomics ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("op, dtype_x_str, mode, sem", [
    (op, dt, mode, sem) for op, dt in [('add', 'uint32'), ('add', 'int32'), ('add', 'float32'), ('add', 'int64'),
                                       ('add', 'float64'), ('max', 'uint32'), ('max', 'int32'), ('max', 'float32'),
                                       ('max', 'uint64'), ('max', 'int64'), ('min', 'uint32'), ('min', 'int32'),
                                       ('min', 'float32'), ('min', 'int64'), ('min', 'float64')]
    for mode in ['all_neg', 'all_pos', 'min_neg', 'max_pos'] for sem in [None, 'acq_rel']])
def test_atomic_rmw(op, dtype_x_str, mode, sem, device):
    n_programs = 5

    @triton.jit
    def kernel(X, Z):
        pid = tl.program_id(0)
        x = tl.load(X + pid)
        old = GENERATE_TEST_HERE
        tl.static_assert(old.dtype == x.dtype)

    sem_arg = sem if sem is None else f'"{sem}"'
    kernel = patch_kernel(kernel, {'GENERATE_TEST_HERE': f'tl.atomic_{op}(Z, x, sem={sem_arg})'})
    numpy_op = {'add': np.sum, 'max': np.max, 'min': np.min}[op]
    floating = dtype_x_str in float_dtypes
    max_neutral = float('-inf') if floating else np.iinfo(getattr(np, dtype_x_str)).min
    min_neutral = float('inf') if floating else np.iinfo(getattr(np, dtype_x_str)).max
    neutral = {'add': 0, 'max': max_neutral, 'min': min_neutral}[op]
    rs = RandomState(17)
    x = np.array([2**i for i in range(n_programs)], dtype=getattr(np, dtype_x_str))
    if mode == 'all_neg':
        x = -np.abs(x)
    if mode == 'all_pos':
        x = np.abs(x)
    if mode == 'min_neg':
        x[rs.randint(n_programs, size=(1, )).item()] = -np.max(np.abs(x)) - 1
    if mode == 'max_pos':
        x[rs.randint(n_programs, size=(1, )).item()] = np.max(np.abs(x)) + 1
    z_tri = np.array([neutral], dtype=getattr(np, dtype_x_str))
    kernel[(n_programs, )](x, z_tri)
    z_ref = numpy_op(x).astype(getattr(np, dtype_x_str))
    if op != 'add':
        assert z_ref.item() == z_tri.item()
    else:
        np.testing.assert_allclose(z_ref, z_tri, rtol=0.01)


def test_atomic_rmw_predicate(device):

    @triton.jit
    def kernel(X):
        val = tl.program_id(0)
        if val < 64:
            tl.atomic_max(X, val)

    x = np.zeros((1, ), np.int32)
    kernel[(4096, )](x)
    assert x.item() == 63


@pytest.mark.parametrize("shape, axis, dtype_x_str", [(shape, axis, dt) for shape in [(2, 2), (8, 2), (32, 32)]
                                                      for axis in [0, 1] for dt in ['float16', 'float32', 'uint64',
                                                                                    'int64', 'float64']])
def test_tensor_atomic_rmw(shape, axis, dtype_x_str, device):
    shape0, shape1 = shape

    @triton.jit
    def kernel(Z, X, OLD, AXIS: tl.constexpr, SHAPE0: tl.constexpr, SHAPE1: tl.constexpr, DTYPE: tl.constexpr,
               RETURN_VAL: tl.constexpr):
        off0 = tl.arange(0, SHAPE0)
        off1 = tl.arange(0, SHAPE1)
        x = tl.load(X + off0[:, None] * SHAPE1 + off1[None, :])

        if DTYPE == tl.float16:
            # sum can have bad numerics when accumulating in float16.
            # if we're dealing with float16, do the sum in float32.
            x = x.to(tl.float32)

        z = tl.sum(x, axis=AXIS)

        if DTYPE == tl.float16:
            z = z.to(DTYPE)

        if AXIS == 1:
            old = tl.atomic_add(Z + off0, z)
            if RETURN_VAL:
                tl.store(OLD + off0, old)
        else:
            old = tl.atomic_add(Z + off1, z)
            if RETURN_VAL:
                tl.store(OLD + off1, old)

    rs = RandomState(17)
    x = numpy_random((shape0, shape1), dtype_str=dtype_x_str, rs=rs)
    z_shape = (shape0, ) if axis == 1 else (shape1, )
    z = numpy_random(z_shape, dtype_str=dtype_x_str, rs=rs)
    old = np.zeros(z_shape, dtype=getattr(np, dtype_x_str))
    if x.dtype == np.float16:
        z_ref = z + np.sum(x.astype(np.float32), axis=axis).astype(x.dtype)
    else:
        z_ref = z + np.sum(x, axis=axis)
    old_ref = np.copy(z)
    kernel[(1, )](z, x, old, axis, shape0, shape1, tl.float16 if x.dtype == np.float16 else None, True)
    np.testing.assert_allclose(z_ref, z, rtol=1e-4)
    np.testing.assert_equal(old_ref, old)


@pytest.mark.parametrize("size, dtype_x_str", [(s, d) for s in [2, 8, 64] for d in ['float16', 'float32']])
def test_tensor_atomic_add_non_exclusive_offset(size, dtype_x_str, device):

    @triton.jit
    def kernel(X, val, NUM: tl.constexpr):
        off = tl.arange(0, NUM)
        offset = off[:, None] * NUM + off[None, :]
        val = tl.load(val + offset)
        tl.atomic_add(X + offset // 2, val)

    shape = (size // 2, size)
    x = np.zeros(shape, dtype_x_str)
    val = np.random.default_rng(3).standard_normal(size**2).astype(dtype_x_str)
    kernel[(1, )](x, val, size, num_warps=1)
    np.testing.assert_allclose(val[0::2] + val[1::2], x.reshape(-1), rtol=1e-3 if dtype_x_str == 'float16' else 1e-6)


def test_tensor_atomic_rmw_block(device):
    shape = (8, 8)

    @triton.jit
    def kernel(X, SHAPE0: tl.constexpr, SHAPE1: tl.constexpr):
        off0 = tl.arange(0, SHAPE0)
        off1 = tl.arange(0, SHAPE1)
        offs = off0[:, None] * SHAPE1 + off1[None, :]
        val = offs.to(tl.float32)
        x = X + offs
        tl.atomic_min(x, val)

    x = np.ones((8, 8), np.float32)
    kernel[(2, )](x, shape[0], shape[1])
    assert x.min() == 0.0


@pytest.mark.parametrize("sem", [None, 'acquire', 'release', 'acq_rel', 'relaxed'])
def test_atomic_cas(sem, device):

    @triton.jit
    def change_value(Lock):
        tl.atomic_cas(Lock, 0, 1)

    Lock = np.zeros((1, ), np.int32)
    change_value[(1, )](Lock)
    assert Lock[0] == 1

    @triton.jit
    def serialized_add(data, Lock, SEM: tl.constexpr):
        ptrs = data + tl.arange(0, 128)
        while tl.atomic_cas(Lock, 0, 1, SEM) == 1:
            pass

        tl.store(ptrs, tl.load(ptrs) + 1.0)

        # insert barrier to set a fence between tl.store and
        # tl.atomic_xchg in a block.
        tl.debug_barrier()

        # release lock
        tl.atomic_xchg(Lock, 0)

    Lock = np.zeros((1, ), np.int32)
    data = np.zeros((128, ), np.float32)
    serialized_add[(2000, )](data, Lock, SEM=sem)
    np.testing.assert_allclose(data, np.full((128, ), 2000.0))


@pytest.mark.parametrize("sem", [None, 'acquire', 'release', 'acq_rel', 'relaxed'])
def test_tensor_atomic_cas(sem, device):

    @triton.jit
    def change_value(X, BLOCK_SIZE: tl.constexpr, sem: tl.constexpr):
        pid = tl.program_id(axis=0)
        block_start = pid * BLOCK_SIZE
        offsets = block_start + tl.arange(0, BLOCK_SIZE)
        t1 = tl.full((BLOCK_SIZE, ), 0, dtype=tl.int64)
        t2 = tl.full((BLOCK_SIZE, ), 2, dtype=tl.int64)
        tl.atomic_cas(X + offsets, t1, t2, sem=sem)

    X = np.array([0, 1, 0, 1, 0, 1, 0, 1], np.int64)
    change_value[(2, )](X, 4, sem)
    assert (X == np.array([2, 1, 2, 1, 2, 1, 2, 1])).all()


# -- casts, and joining and splitting blocks ---------------------------------------------------------------------
CAST_PAIRS = [(x, z, False) for x in dtypes for z in dtypes if x == z or (x, z) in set(PAIRS) or (z, x) in set(PAIRS)] + \
    [('float32', 'bool', False), ('float32', 'int32', True)] + \
    [(f'uint{b}', f'int{b}', True) for b in [8, 16, 32, 64]] + [(f'int{b}', f'uint{b}', True) for b in [8, 16, 32, 64]]


@pytest.mark.parametrize("dtype_x, dtype_z, bitcast", CAST_PAIRS)
def test_cast(dtype_x, dtype_z, bitcast, device):
    size = 1024
    x = numpy_random(size, dtype_str=dtype_x, low=-10, high=10) * 10
    if dtype_z in uint_dtypes:      # Triton clamps negatives where numpy wraps: Triton's test avoids them
        x = np.absolute(x)
    if 'float' in dtype_z and 'float' in dtype_x:   # values both types represent
        x = x.astype(dtype_z).astype(dtype_x)

    @triton.jit
    def kernel(X, Z, TO_TYPE: tl.constexpr, BITCAST: tl.constexpr, SIZE: tl.constexpr, ARG_HASH: tl.constexpr):
        x_ptr = X + tl.arange(0, SIZE)
        z_ptr = Z + tl.arange(0, SIZE)
        x = tl.load(x_ptr)

        # Depending on the value of ARG_HASH (a "random" number determined by
        # the test parameters), spell the cast one of three different ways.
        if ARG_HASH % 4 == 0:
            z = x.to(Z.dtype.element_ty, bitcast=BITCAST)
        elif ARG_HASH % 4 == 1:
            z = x.cast(Z.dtype.element_ty, bitcast=BITCAST)
        elif ARG_HASH % 4 == 2:
            z = tl.cast(x, Z.dtype.element_ty, bitcast=BITCAST)
        else:
            z = tl.cast(x, TO_TYPE, bitcast=BITCAST)

        tl.store(z_ptr, z)

    dtype_z_np = dtype_z if dtype_z != 'bool' else 'bool_'
    z_tri = np.empty((size, ), dtype=getattr(np, dtype_z_np))
    to_type = tl.int1 if dtype_z == 'bool' else getattr(tl, dtype_z)
    for arg_hash in range(4):       # every spelling of the cast (Triton picks one by a hash)
        kernel[(1, )](x, z_tri, TO_TYPE=to_type, BITCAST=bitcast, SIZE=size, ARG_HASH=arg_hash, num_warps=1)
        z_ref = x.view(getattr(np, dtype_z_np)) if bitcast else x.astype(getattr(np, dtype_z_np))
        np.testing.assert_allclose(z_ref, z_tri, rtol=0, atol=0, err_msg=f"spelling {arg_hash}")


@pytest.mark.parametrize("dtype_str, num_warps", [(d, w) for d in int_dtypes + float_dtypes for w in [4, 8]])
def test_cat(dtype_str, num_warps, device):

    @triton.jit
    def kernel(X, Y, Z, N: tl.constexpr):
        offs = tl.arange(0, N)
        x = tl.load(X + offs)
        y = tl.load(Y + offs)
        z = tl.cat(x, y, can_reorder=True)
        tl.store(Z + tl.arange(0, 2 * N), z)

    x = np.arange(0, 128).astype(dtype_str)
    y = np.arange(-128, 0).astype(dtype_str)
    z = np.zeros((256, ), dtype_str)
    kernel[(1, )](x, y, z, N=128, num_warps=num_warps)
    assert z.sum() == np.concatenate([x, y]).sum()
    assert np.unique(z).size == z.size


@pytest.mark.parametrize("dtype_str", ["int8", "int16", "int32", "int64", "uint8", "float16", "float32", "float64"])
@pytest.mark.parametrize("constant_field", ["value", "mask"])
def test_store_constant(dtype_str, constant_field, device):

    @triton.jit
    def kernel(output_ptr, n_elements, BLOCK_SIZE: tl.constexpr, CONSTANT_FIELD: tl.constexpr):
        offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        if CONSTANT_FIELD == "value":
            value = 1
            output = tl.full([BLOCK_SIZE], value=value, dtype=value.dtype)
            mask = offsets < n_elements
        elif CONSTANT_FIELD == "mask":
            output = offsets < n_elements
            mask = False
        tl.store(output_ptr + offsets, output, mask=mask)

    block_size = 128
    output = np.zeros([block_size], dtype_str)
    kernel[(1, )](output, block_size, BLOCK_SIZE=block_size, CONSTANT_FIELD=constant_field)
    assert (output == (1 if constant_field == "value" else 0)).all()


def test_umulhi(device):

    @triton.jit
    def kernel(X, Y, Z, N: tl.constexpr):
        offs = tl.arange(0, N)
        x = tl.load(X + offs)
        y = tl.load(Y + offs)
        z = tl.umulhi(x, y)
        tl.store(Z + tl.arange(0, N), z)

    rs = RandomState(17)
    N = 128
    x = numpy_random((N, ), dtype_str='int32', rs=rs, low=0)
    y = numpy_random((N, ), dtype_str='int32', rs=rs, low=0)
    z_tri = np.zeros_like(x)
    kernel[(1, )](x, y, z_tri, N=N)
    np.testing.assert_equal((x.astype(np.int64) * y.astype(np.int64)) >> 32, z_tri)


def test_join(device):

    @triton.jit
    def kernel(X, Y, Z, N: tl.constexpr):
        offs = tl.arange(0, N)
        x = tl.load(X + offs)
        y = tl.load(Y + offs)
        z = tl.join(x, y)
        tl.store(Z + tl.arange(0, N)[:, None] * 2 + tl.arange(0, 2)[None, :], z)

    x, y = np.arange(0, 128, dtype=np.int32), np.arange(-128, 0, dtype=np.int32)
    z = np.zeros((128, 2), np.int32)
    kernel[(1, )](x, y, z, N=128)
    np.testing.assert_equal(np.stack([x, y], axis=-1), z)


def test_join_scalars(device):

    @triton.jit
    def kernel(X, Y, Z):
        x = tl.load(X)
        y = tl.load(Y)
        z = tl.join(x, y)
        tl.static_assert(z.shape == [2])
        tl.store(Z + tl.arange(0, 2), z)

    z = np.zeros([2], np.float32)
    kernel[(1, )](np.full([1], 42, np.int32), np.full([1], 100, np.int32), z)
    np.testing.assert_equal([42, 100], z)


def test_join_with_mma(device):

    @triton.jit
    def kernel(X, Z):
        x = tl.load(X + 16 * tl.arange(0, 32)[:, None] + tl.arange(0, 16)[None, :])  # (32,16)
        x2 = tl.join(x, 2 * x)  # (32,16,2)
        x3 = tl.reshape(x2, (32, 32))
        z = tl.dot(x3, x3)  # (32,32)
        tl.store(Z + 32 * tl.arange(0, 32)[:, None] + tl.arange(0, 32)[None, :], z)

    x = np.arange(0, 32 * 16, dtype=np.float32).reshape((32, 16))
    r = np.stack([x, 2 * x], axis=-1).reshape((32, 32))
    z = np.zeros((32, 32), np.float32)
    kernel[(1, )](x, z)
    np.testing.assert_allclose(z, r @ r, rtol=1e-5)


@pytest.mark.parametrize("debug", [False, True])
def test_interleave(device, debug):

    @triton.jit(debug=debug)
    def kernel(Z, N: tl.constexpr):
        z = tl.interleave(tl.arange(0, N), tl.arange(N, 2 * N))
        tl.store(Z + tl.arange(0, 2 * N), z)

    z = np.zeros(256, np.int32)
    kernel[(1, )](z, N=128)
    np.testing.assert_equal(np.stack([np.arange(128), np.arange(128, 256)], axis=-1).reshape(256), z)


def test_interleave_scalars(device):

    @triton.jit
    def kernel(X, Y, Z):
        z = tl.interleave(X, Y)
        tl.static_assert(z.shape == [tl.constexpr(2)])
        tl.store(Z + tl.arange(0, 2), z)

    z = np.zeros(2, np.float32)
    kernel[(1, )](10, 20, z)
    np.testing.assert_equal([10, 20], z)


def test_split(device):

    @triton.jit
    def kernel(X, Z1, Z2, N: tl.constexpr):
        offs = tl.arange(0, N)
        x = tl.load(X + offs)
        x1 = tl.reshape(x, (N // 2, 2))
        z1, z2 = tl.split(x1)
        tl.store(Z1 + tl.arange(0, N // 2), z1)
        tl.store(Z2 + tl.arange(0, N // 2), z2)

    x = np.arange(0, 256, dtype=np.int32).reshape((128, 2))
    z1, z2 = np.zeros(128, np.int32), np.zeros(128, np.int32)
    kernel[(1, )](x, z1, z2, N=256)
    np.testing.assert_equal(x[:, 0], z1)
    np.testing.assert_equal(x[:, 1], z2)


def test_split_to_scalar(device):

    @triton.jit
    def kernel(X, Z1, Z2):
        offs = tl.arange(0, 2)
        x = tl.load(X + offs)
        z1, z2 = tl.split(x)
        tl.static_assert(isinstance(z1, tl.tensor))
        tl.static_assert(isinstance(z2, tl.tensor))
        tl.static_assert(z1.shape == [])
        tl.static_assert(z2.shape == [])
        tl.store(Z1, z1)
        tl.store(Z2, z2)

    x = np.arange(0, 2, dtype=np.int64).reshape(1, 2)
    z1, z2 = np.zeros(1, np.int64), np.zeros(1, np.int64)
    kernel[(1, )](x, z1, z2)
    np.testing.assert_equal(x[:, 0], z1)
    np.testing.assert_equal(x[:, 1], z2)
