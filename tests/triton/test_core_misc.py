"""Triton's test_core.py, its last part: scalar loads with masks, fp8 dots with a low-precision
accumulator, NaN propagation, clamp, iterators, temporaries in loops, num_programs, libdevice,
side-effectful reductions and scans, gather, JIT functions as arguments, zero-strided and
aliased arguments, strided and indirect loads and stores, dtypes by name; ported to minitriton.

Source: triton-lang/triton at commit 0072ae0b3a4841bba3b75698d4d1b0edd0a96d38 (MIT licence).
Kernels unchanged; host code ours on numpy.  Where Triton's test then reads the compiled
PTX/TTIR (fp fusion, loop unrolling, pipelining) the kernel's result is checked instead.  Left
out: the layout-conversion tests (hand-written TTGIR), test_override_arch and test_maxnreg
(CUDA targets), test_tl_range_fuse / test_tl_range_option_none (they only read the TTIR),
test_gather_warp_shuffle (TTGIR).
"""
import numpy as np
import pytest
from numpy.random import RandomState

import minitriton as triton                 # was: import triton
import minitriton.language as tl            # was: import triton.language as tl
from minitriton.language.extra import libdevice

from .helpers import check_type_supported, dtypes, fp8_to_float32, numpy_random, stride, to_numpy, to_triton


def test_load_scalar_with_mask(device):

    @triton.jit
    def kernel(Input, Index, Out, N: int):
        index = tl.load(Index)
        scalar = tl.load(Input + index, mask=index < N, other=0)
        tl.store(Out, scalar, mask=index < N)

    Index = np.array([0], dtype=np.int32)
    Input = np.array([0], dtype=np.int32)
    Out = np.empty_like(Index)
    kernel[(1, )](Input, Index, Out, Index.size)
    assert Out[0] == 0


@pytest.mark.parametrize("dtype_str", ['float16', 'int16'])
def test_ptx_cast(dtype_str, device):

    @triton.jit
    def kernel(in_ptr0, out_ptr2, xnumel, rnumel, dtype: tl.constexpr, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
        xoffset = tl.program_id(0) * XBLOCK
        xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
        xmask = xindex < xnumel
        rbase = tl.arange(0, RBLOCK)[None, :]
        x0 = xindex
        _tmp4 = (tl.zeros([XBLOCK, RBLOCK], dtype) - 10000).to(dtype)
        for roffset in range(0, rnumel, RBLOCK):
            rindex = roffset + rbase
            rmask = rindex < rnumel
            r1 = rindex
            tmp0 = tl.load(in_ptr0 + (r1 + (197 * x0)), rmask & xmask).to(dtype)
            tmp1 = 2
            tmp2 = tmp0 * tmp1
            tmp3 = tmp2.to(dtype)
            tmp5 = _tmp4 < tmp3
            _tmp4 = tl.where(rmask & xmask & tmp5, tmp3, _tmp4)
            tl.store(out_ptr2 + (r1 + (197 * x0) + tl.zeros([XBLOCK, RBLOCK], tl.int32)), _tmp4, rmask & xmask)

    if dtype_str == 'int16':
        np_dtype = np.int16
        triton_dtype = tl.int32
    else:
        np_dtype = np.float16
        triton_dtype = tl.float32

    s0 = 4
    buf11 = -np.ones((6 * s0, 197, 197), dtype=np_dtype)
    buf14 = -np.ones((s0, 6, 197, 197), dtype=np_dtype)
    kernel[(4728, )](buf11, buf14, 1182 * s0, 197, triton_dtype, 1, 256, num_warps=2)
    assert buf14.astype(np.float32).mean() == -2.0


def f8_to_f16(x, dtype):

    @triton.jit
    def kernel(Y, X, N, BLOCK_SIZE: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offs < N
        x = tl.load(X + offs, mask=mask)
        tl.store(Y + offs, x, mask=mask)

    ret = np.empty(x.shape, dtype=np.float16)
    grid = lambda META: (triton.cdiv(x.size, META['BLOCK_SIZE']), )  # noqa: E731
    dtype = getattr(tl, dtype)
    kernel[grid](ret, triton.reinterpret(x, dtype), ret.size, BLOCK_SIZE=1024)
    return ret


@triton.jit
def matmul_kernel(  #
        a_ptr, b_ptr, c_ptr,  #
        M, N, K,  #
        stride_am, stride_ak,  #
        stride_bk, stride_bn,  #
        stride_cm, stride_cn,  #
        BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,  #
        low_precision_acc: tl.constexpr,  #
        num_stages: tl.constexpr = 3  #
):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    pid_m = pid % num_pid_m
    pid_n = pid // num_pid_m
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BLOCK_SIZE_K), num_stages=num_stages):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        accumulator = tl.dot(a, b, acc=accumulator, max_num_imprecise_acc=low_precision_acc)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, accumulator)


# Triton: low_precision_acc 0, 32, 64, 128; here 0 and 32 (the accumulator's width changes nothing
# on a CPU)
@pytest.mark.parametrize("M, N, K", [(128, 256, 256)])
@pytest.mark.parametrize("BLOCK_M, BLOCK_N, BLOCK_K", [(128, 256, 128), (64, 64, 64)])
@pytest.mark.parametrize("in_type_str", ['float8e5', 'float8e4nv', 'float8e4b15'])
@pytest.mark.parametrize("low_precision_acc", [0, 32])
def test_dot_max_num_imprecise_acc(M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, in_type_str, low_precision_acc, device):
    num_stages = 3
    check_type_supported(in_type_str, device)
    A = numpy_random((M, K), dtype_str=in_type_str)
    B = numpy_random((K, N), dtype_str=in_type_str)
    C = np.empty((M, N), dtype=np.float32)
    num_warps = 8
    a = to_triton(A, device=device, dst_type=in_type_str)
    b = to_triton(B, device=device, dst_type=in_type_str)
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N), 1)
    max_num_impressive_acc = low_precision_acc if low_precision_acc <= BLOCK_K else None
    matmul_kernel[grid](a, b, C, M, N, K, stride(a, 0), stride(a, 1), stride(b, 0), stride(b, 1), stride(C, 0),
                        stride(C, 1), BLOCK_M, BLOCK_N, BLOCK_K, max_num_impressive_acc, num_warps=num_warps,
                        num_stages=num_stages)
    th_a = f8_to_f16(A, in_type_str)
    th_b = f8_to_f16(B, in_type_str)
    # (ours) the fp16 copies hold the fp8 values exactly: check them against an independent decoding
    np.testing.assert_equal(th_a.astype(np.float32), fp8_to_float32(A, in_type_str))
    ref_out = np.matmul(th_a.astype(np.float32), th_b.astype(np.float32))
    if in_type_str == 'float8e4nv':
        np.testing.assert_allclose(ref_out, C, rtol=0.01, atol=0.01)
    else:
        np.testing.assert_allclose(ref_out, C, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("enable_fp_fusion", [False, True])
def test_enable_fp_fusion(enable_fp_fusion, device):

    # Sequential multiply add can be fused by backend
    @triton.jit
    def mul_add(data):
        ptrs = data + tl.arange(0, 128)
        tl.store(ptrs, tl.load(ptrs) * 1.5 + 1.0)

    data = RandomState(0).randn(128).astype(np.float32)
    expect = data * np.float32(1.5) + np.float32(1.0)
    mul_add[(1, )](data, enable_fp_fusion=enable_fp_fusion)
    np.testing.assert_allclose(data, expect, rtol=1e-6)     # (Triton reads the PTX for an fma)


@pytest.mark.parametrize("dtype", ['float16', 'float32'])
@pytest.mark.parametrize("propagate_nan", ['NONE', 'ALL'])
@pytest.mark.parametrize("func", ['minimum', 'maximum', 'clamp'])
def test_propagate_nan(dtype, propagate_nan, func, device):

    @triton.jit
    def kernel(A, B, C, propagate_nan: tl.constexpr, func: tl.constexpr):
        if func == 'clamp':
            tl.store(
                C,
                getattr(tl, func)(tl.load(A), -tl.load(B), tl.load(B),
                                  propagate_nan=getattr(tl.PropagateNan, propagate_nan)))
        else:
            tl.store(C,
                     getattr(tl, func)(tl.load(A), tl.load(B), propagate_nan=getattr(tl.PropagateNan, propagate_nan)))

    rs = RandomState(0)
    for mode in ['A', 'B', 'both']:
        if func == 'clamp' and mode == 'B':
            # clamp does not guarantee propagation from 'min' and 'max' args
            continue
        A = rs.randn(1).astype(dtype)
        if mode == 'A' or mode == 'both': A[0] = np.nan
        B = rs.randn(1).astype(dtype)
        if mode == 'B' or mode == 'both': B[0] = np.nan
        C = np.zeros_like(A)
        kernel[(1, )](A, B, C, propagate_nan, func)

        if mode == 'both' or propagate_nan == 'ALL':
            assert np.isnan(C[0])
        else:
            assert not np.isnan(C[0])


@pytest.mark.parametrize("dtype", ['float16', 'float32'])
def test_clamp(dtype, device):

    @triton.jit
    def kernel(x_ptr, min_ptr, max_ptr, out_ptr, ref_ptr, N, BLOCK_SIZE: tl.constexpr):

        off = tl.arange(0, BLOCK_SIZE)
        mask = off < N
        x = tl.load(x_ptr + off, mask=mask)
        min = tl.load(min_ptr + off, mask=mask)
        max = tl.load(max_ptr + off, mask=mask)
        out = out_ptr + off
        ref = ref_ptr + off

        tl.store(out, tl.clamp(x, min, max), mask=mask)
        ref_val = tl.minimum(tl.maximum(x, min), max)
        tl.store(ref, ref_val, mask=mask)

    size = 128
    rs = RandomState(0)
    x = rs.randn(size).astype(dtype)
    a = rs.randn(size).astype(dtype)
    b = rs.randn(size).astype(dtype)
    min = np.minimum(a, b)
    max = np.maximum(a, b)
    out = np.zeros_like(x)
    ref = np.zeros_like(x)

    kernel[(size, )](x, min, max, out, ref, x.size, BLOCK_SIZE=size)

    np.testing.assert_equal(out, ref)


@pytest.mark.parametrize("dtype", ['bfloat16', 'float16', 'float32'])
def test_clamp_symmetric(dtype, device):
    check_type_supported(dtype, device)

    @triton.jit
    def kernel(x_ptr, limit_ptr, out_ptr, ref_ptr, N, BLOCK_SIZE: tl.constexpr):

        off = tl.arange(0, BLOCK_SIZE)
        mask = off < N
        x = tl.load(x_ptr + off, mask=mask)
        limit = tl.load(limit_ptr + off, mask=mask)
        out = out_ptr + off
        ref = ref_ptr + off

        tl.store(out, tl.clamp(x, -limit, limit), mask=mask)
        ref_val = tl.minimum(tl.maximum(x, -limit), limit)
        tl.store(ref, ref_val, mask=mask)

    size = 128
    rs = RandomState(0)
    x = rs.randn(size).astype(dtype)
    limit = np.abs(rs.randn(size)).astype(dtype)
    out = np.zeros_like(x)
    ref = np.zeros_like(x)

    kernel[(size, )](x, limit, out, ref, x.size, BLOCK_SIZE=size)

    np.testing.assert_equal(out, ref)


def test_static_range(device):

    @triton.jit
    def loop_kernel(Z, N: tl.constexpr, step: tl.constexpr):
        acc = 0
        for i in tl.static_range(0, N, step=step):
            acc += i
        tl.store(Z, acc)

    N = 100
    step = 7
    Out = np.empty(1, dtype=np.int32)
    loop_kernel[(1, )](Out, N, step)
    Acc = np.array([0], dtype=np.int32)
    for i in range(0, N, step):
        Acc += i
    assert (Out == Acc).all(), (Out, Acc)


def test_tl_range_num_stages(device):
    M, N, K = 64, 64, 512
    BLOCK_M, BLOCK_N, BLOCK_K = M, N, 64
    rs = RandomState(0)
    a = rs.randn(M, K).astype(np.float16)
    b = rs.randn(K, N).astype(np.float16)
    c = np.empty((M, N), dtype=np.float32)
    matmul_kernel[
        1,
    ](a, b, c, M, N, K, stride(a, 0), stride(a, 1), stride(b, 0), stride(b, 1), stride(c, 0), stride(c, 1), BLOCK_M,
      BLOCK_N, BLOCK_K, 0, num_stages=5)
    ref_out = np.matmul(a.astype(np.float32), b.astype(np.float32))
    # GPU invokes tensor core for float16 matmul, which is not supported in interpreter.
    # Thus we use a higher tolerance
    np.testing.assert_allclose(ref_out, c, rtol=1e-2, atol=1e-1)


def test_temp_var_in_loop(device):

    @triton.jit
    def temp_in_loop(Z, N: tl.constexpr, BLOCK: tl.constexpr):
        acc = tl.full((BLOCK, ), 0, dtype=tl.int32)
        for i in range(N):
            if i == 0:
                temp = tl.full((BLOCK, ), 2, dtype=tl.int32)
                acc = temp
            else:
                acc += tl.full((BLOCK, ), 1, dtype=tl.int32)
            # reuse the temp variable and make sure to check that it isn't creating incorrect IR.
            temp = tl.full((BLOCK, ), 1, dtype=tl.int32)
            acc += temp
        z = Z + tl.arange(0, BLOCK)
        tl.store(z, acc)

    N = 10
    BLOCK = 32
    out = np.empty((BLOCK, ), dtype=np.int32)
    temp_in_loop[(1, )](out, N, BLOCK)
    acc = np.full((BLOCK, ), 0, dtype=np.int32)
    for i in range(N):
        if i == 0:
            temp = np.full((BLOCK, ), 2, dtype=np.int32)
            acc = temp
        else:
            acc += np.full((BLOCK, ), 1, dtype=np.int32)
        temp = np.full((BLOCK, ), 1, dtype=np.int32)
        acc += temp
    assert (acc == out).all()


def test_num_programs(device):
    # Assuming that the kernel is launched with a grid of (11, 21, 31)
    grid = (11, 21, 31)
    input = np.empty((3, ), dtype=np.int32)

    @triton.jit
    def kernel(input):
        num_programs_0 = tl.num_programs(0)
        num_programs_1 = tl.num_programs(1)
        num_programs_2 = tl.num_programs(2)
        tl.store(input, num_programs_0)
        tl.store(input + 1, num_programs_1)
        tl.store(input + 2, num_programs_2)

    kernel[grid](input)
    assert np.all(input == np.array(grid))


# Triton's interpreter skips this test (it has no libdevice); minitriton runs it
@pytest.mark.parametrize("dtype_str", ['float32', 'float64'])
def test_math_extern(dtype_str, device):

    @triton.jit
    def kernel(
        x_ptr,
        y_ptr,
        n_elements,
        BLOCK_SIZE: tl.constexpr,
    ):
        pid = tl.program_id(axis=0)
        block_start = pid * BLOCK_SIZE
        offsets = block_start + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n_elements
        x = tl.load(x_ptr + offsets, mask=mask)
        y = libdevice.tanh(x)
        tl.store(y_ptr + offsets, y, mask=mask)

    shape = (128, )
    rs = RandomState(17)

    x = numpy_random(shape, dtype_str=dtype_str, rs=rs)
    y_ref = np.tanh(x)
    x_tri = to_triton(x, device=device)
    y_tri = to_triton(numpy_random(shape, dtype_str=dtype_str, rs=rs), device=device)
    kernel[(1, )](x_tri, y_tri, shape[0], BLOCK_SIZE=shape[0])
    np.testing.assert_allclose(y_ref, to_numpy(y_tri), rtol=0.01)


def test_unroll_attr(device):

    @triton.jit
    def _kernel(dst, unroll_factor: tl.constexpr):
        pid = tl.program_id(axis=0)
        for i in tl.range(0, 10, loop_unroll_factor=unroll_factor):
            tl.atomic_add(dst + pid, i + pid)

    # Try for all different loop unroll factors (Triton counts the unrolled atomics in the TTIR;
    # here the sum they make is checked)
    for unroll_factor in [1, 2, 4, 5, 8]:
        dst = np.zeros(1, np.float32)
        _kernel[(1, )](dst, unroll_factor)
        assert dst[0] == sum(range(10))


@triton.jit
def sanitize_add(a, b):
    a64 = a.to(tl.int64)
    b64 = b.to(tl.int64)
    r64 = a64 + b64
    tl.device_assert((r64 >= -2**31) & (r64 <= 2**31 - 1))
    return a + b


# Triton runs these three on CUDA only
def test_side_effectful_reduction(device):

    @triton.jit(debug=True)
    def sanitize_sum_kernel(Z, X, BLOCK: tl.constexpr):
        vals = tl.load(X + tl.arange(0, BLOCK))
        z = tl.reduce(vals, 0, sanitize_add)
        tl.store(Z, z)

    BLOCK = 512
    X = RandomState(42).randint(0, 10, [BLOCK]).astype(np.int32)
    X[:300] = 32
    X[300:] = 0
    Z = np.zeros((), dtype=np.int32)
    sanitize_sum_kernel[(1, )](Z, X, BLOCK=BLOCK)
    assert Z == X.sum()


@pytest.mark.parametrize("reduce_dim", [0, 1])
def test_side_effectful_reduction_2d(device, reduce_dim):

    @triton.jit(debug=True)
    def sanitize_sum_2d_kernel(Z, X, BLOCK_0: tl.constexpr, BLOCK_1: tl.constexpr, reduce_dim: tl.constexpr,
                               NON_REDUCE_DIM: tl.constexpr):
        offsets = tl.arange(0, BLOCK_0)[:, None] * BLOCK_1 + tl.arange(0, BLOCK_1)[None, :]
        vals = tl.load(X + offsets)
        z = tl.reduce(vals, reduce_dim, sanitize_add)
        tl.store(Z + tl.arange(0, NON_REDUCE_DIM), z)

    BLOCK_0 = 16
    BLOCK_1 = 32
    NON_REDUCE_DIM = BLOCK_1 if reduce_dim == 0 else BLOCK_0
    X = RandomState(42).randint(0, 10, [BLOCK_0, BLOCK_1]).astype(np.int32)
    Z = np.zeros([NON_REDUCE_DIM], dtype=np.int32)
    sanitize_sum_2d_kernel[(1, )](Z, X, BLOCK_0=BLOCK_0, BLOCK_1=BLOCK_1, reduce_dim=reduce_dim,
                                  NON_REDUCE_DIM=NON_REDUCE_DIM)
    np.testing.assert_equal(Z, X.sum(reduce_dim).astype(np.int32))


def test_dtype(device):

    @triton.jit
    def kernel(X):
        dtype_x: tl.constexpr = X.dtype.element_ty
        tl.static_assert(dtype_x == tl.int32)
        tl.static_assert(dtype_x == tl.constexpr(tl.int32))
        tl.static_assert(dtype_x == tl.int8 or (dtype_x == tl.int16 or dtype_x == tl.int32))

    X = np.zeros(1, dtype=np.int32)
    kernel[(1, )](X)


def test_side_effectful_scan(device):

    @triton.jit(debug=True)
    def sanitize_cumsum_kernel(Z, X, BLOCK: tl.constexpr):
        vals = tl.load(X + tl.arange(0, BLOCK))
        z = tl.associative_scan(vals, 0, sanitize_add)
        tl.store(Z + tl.arange(0, BLOCK), z)

    BLOCK = 512
    X = RandomState(42).randint(0, 10, [BLOCK]).astype(np.int32)
    X[:300] = 32
    X[300:] = 0
    Z = np.zeros_like(X)
    sanitize_cumsum_kernel[(1, )](Z, X, BLOCK=BLOCK)
    np.testing.assert_equal(Z, X.cumsum(0).astype(np.int32))


# stress test slice layout usages in reductions.
@pytest.mark.parametrize("in_shape, perm, red_dims", [
    ((4, 32, 32, 4, 2), [2, 1, 0, 3, 4], [3, 1, 0]),
    ((8, 2, 32, 4, 16), [4, 0, 1, 3, 2], [0, 2, 0]),
])
def test_chained_reductions(in_shape, perm, red_dims, device):

    @triton.jit
    def kernel(In, Out,  #
               dim_0: tl.constexpr, dim_1: tl.constexpr, dim_2: tl.constexpr, dim_3: tl.constexpr, dim_4: tl.constexpr,
               perm_0: tl.constexpr, perm_1: tl.constexpr, perm_2: tl.constexpr, perm_3: tl.constexpr,
               perm_4: tl.constexpr, red_dim_0: tl.constexpr, red_dim_1: tl.constexpr, red_dim_2: tl.constexpr):
        idx = tl.arange(0, dim_0 * dim_1 * dim_2 * dim_3 * dim_4)
        idx = idx.reshape(dim_0, dim_1, dim_2, dim_3, dim_4)
        vals = tl.load(In + idx)
        vals = tl.permute(vals, [perm_0, perm_1, perm_2, perm_3, perm_4])
        r = tl.sum(tl.sum(tl.sum(vals, red_dim_0), red_dim_1), red_dim_2)
        st_idx = tl.arange(0, r.shape[0] * r.shape[1]).reshape(r.shape)
        tl.store(Out + st_idx, r)

    input = RandomState(0).randint(0, 1000, in_shape).astype(np.int32)
    temp = np.ascontiguousarray(np.transpose(input, perm))
    ref = np.sum(np.sum(np.sum(temp, axis=red_dims[0]), axis=red_dims[1]), axis=red_dims[2]).astype(np.int32)
    result = np.empty_like(ref)
    kernel[(1, )](input, result, input.shape[0], input.shape[1], input.shape[2], input.shape[3], input.shape[4],
                  perm[0], perm[1], perm[2], perm[3], perm[4], red_dims[0], red_dims[1], red_dims[2])

    assert np.all(ref == result)


@triton.jit
def gather_test_kernel(src_ptr, idx_ptr, out_ptr, axis: tl.constexpr, src_dim0: tl.constexpr, src_dim1: tl.constexpr,
                       src_stride0: tl.constexpr, src_stride1: tl.constexpr, idx_dim0: tl.constexpr,
                       idx_dim1: tl.constexpr, idx_stride0: tl.constexpr, idx_stride1: tl.constexpr,
                       out_dim0: tl.constexpr, out_dim1: tl.constexpr, out_stride0: tl.constexpr,
                       out_stride1: tl.constexpr):
    src_offs = (tl.arange(0, src_dim0)[:, None] * src_stride0 + tl.arange(0, src_dim1)[None, :] * src_stride1)
    src = tl.load(src_ptr + src_offs)

    idx_offs = (tl.arange(0, idx_dim0)[:, None] * idx_stride0 + tl.arange(0, idx_dim1)[None, :] * idx_stride1)
    idx = tl.load(idx_ptr + idx_offs)

    out = tl.gather(src, idx, axis)

    out_offs = (tl.arange(0, out_dim0)[:, None] * out_stride0 + tl.arange(0, out_dim1)[None, :] * out_stride1)
    tl.store(out_ptr + out_offs, out)


@pytest.mark.parametrize("src_shape, indices_shape, axis", [
    ([4, 4], [8, 4], 0),
    ([128, 64], [256, 64], 0),
    ([128, 64], [128, 128], 1),
])
def test_gather(src_shape, indices_shape, axis, device):

    def triton_gather(src, axis: int, indices):
        output = np.empty(indices.shape, dtype=src.dtype)

        gather_test_kernel[(1, )](src, indices, output, axis, src.shape[0],
                                  src.shape[1], stride(src, 0), stride(src, 1), indices.shape[0], indices.shape[1],
                                  stride(indices, 0), stride(indices, 1), output.shape[0], output.shape[1],
                                  stride(output, 0), stride(output, 1))

        return output

    rs = RandomState(0)
    src = rs.randn(*src_shape).astype(np.float32)
    indices = rs.randint(0, src.shape[axis], indices_shape).astype(np.int64)
    ref = np.take_along_axis(src, indices, axis)
    result = triton_gather(src, axis, indices)
    np.testing.assert_equal(result, ref)


@triton.jit
def mul_jit_function(x, y):
    return x * y


@triton.jit
def apply_binary_op(x, combine_op):
    return combine_op(x, x)


def test_jit_function_arg(device):

    @triton.jit
    def square_kernel_jit_function(in_ptr, out_ptr, BLOCK_SIZE: tl.constexpr):
        offsets = tl.arange(0, BLOCK_SIZE)
        in_data = tl.load(in_ptr + offsets)
        out_data = apply_binary_op(in_data, mul_jit_function)  # pass a JITFunction into another JITFunction
        tl.store(out_ptr + offsets, out_data)

    BLOCK_SIZE = 16
    x = np.full((BLOCK_SIZE, ), 3.0, np.float32)
    out = np.empty((BLOCK_SIZE, ), np.float32)
    expect = np.full((BLOCK_SIZE, ), 9.0, dtype=x.dtype)

    square_kernel_jit_function[(1, )](x, out, BLOCK_SIZE)

    np.testing.assert_equal(out, expect)


def test_zero_strided_tensors(device):

    @triton.jit
    def _simple_add(
        X,
        stride_x_a,
        stride_x_b,
    ):
        pid_a = tl.program_id(0)
        pid_b = tl.program_id(1)

        # doesn't directly index c dim, so relies on 0-strided c dim to affect every element
        x_ptr = X + pid_a * stride_x_a + pid_b * stride_x_b

        tl.atomic_add(x_ptr, 1)

    base = np.zeros((2, 2, 1), np.float32)
    c_dim = 3
    # was: x.expand((2, 2, c_dim)) -- a writable view whose last dimension has stride 0
    x = np.lib.stride_tricks.as_strided(base, (2, 2, c_dim), base.strides[:2] + (0, ), writeable=True)

    a, b, c = x.shape
    grid = (a, b, c)
    _simple_add[grid](x, stride(x, 0), stride(x, 1))

    assert np.allclose(x, np.ones_like(x) * c_dim)


def test_aliasing(device):

    @triton.jit
    def aliasing_kernel(buffer, buffer2):
        triton.language.store(buffer, 1)

    buffer = np.zeros(1, np.float32)
    aliasing_kernel[(1, )](buffer, buffer)
    assert buffer[0] == 1


@pytest.mark.parametrize("dtype", list(dtypes) + ["bfloat16"])
def test_strided_load(dtype, device):
    check_type_supported(dtype, device)

    @triton.jit
    def take_every_second_element(x_ptr, output_ptr, BLOCK_SIZE: tl.constexpr):
        strided_offsets = tl.arange(0, BLOCK_SIZE) * 2
        linear_offsets = tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_ptr + strided_offsets)
        tl.store(output_ptr + linear_offsets, x)

    STRIDE = 2
    SIZE = 512
    OUT_SIZE = SIZE // STRIDE

    x = numpy_random(SIZE, dtype_str=dtype)
    x_tri = to_triton(x, device)
    out_tri = np.empty(OUT_SIZE, np.float32)
    take_every_second_element[(1, 1)](x_tri, out_tri, OUT_SIZE)

    # Test that every second element (starting from [0]) from x is stored in out_tri
    np.testing.assert_allclose(x[::2].astype(np.float32), to_numpy(out_tri))


@pytest.mark.parametrize("dtype", list(dtypes) + ["bfloat16"])
def test_strided_store(dtype, device):
    check_type_supported(dtype, device)

    @triton.jit
    def store_into_every_second(x_ptr, output_ptr, BLOCK_SIZE: tl.constexpr):
        strided_offsets = tl.arange(0, BLOCK_SIZE) * 2
        linear_offsets = tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_ptr + linear_offsets)
        tl.store(output_ptr + strided_offsets, x)

    STRIDE = 2
    SIZE = 512
    OUT_SIZE = SIZE * STRIDE

    x = numpy_random(SIZE, dtype_str=dtype)
    x_tri = to_triton(x, device)
    out_tri = np.zeros(OUT_SIZE, np.float32)
    store_into_every_second[(1, 1)](x_tri, out_tri, SIZE)

    # Test that every second element (starting from [0]) is the same as in x
    np.testing.assert_allclose(x.astype(np.float32), to_numpy(out_tri)[::2])
    # Test that every second element (starting from [1]) is still zero
    np.testing.assert_allclose(np.zeros_like(x, np.float32), to_numpy(out_tri)[1::2])


@pytest.mark.parametrize("dtype", list(dtypes) + ["bfloat16"])
def test_indirect_load(dtype, device):
    check_type_supported(dtype, device)

    @triton.jit
    def indirect_load(offset_ptr, x_ptr, output_ptr, SIZE: tl.constexpr):
        linear_offsets = tl.arange(0, SIZE)
        offsets = tl.load(offset_ptr + linear_offsets)
        x = tl.load(x_ptr + offsets)
        tl.store(output_ptr + linear_offsets, x)

    SIZE = 512
    x = numpy_random(SIZE, dtype_str=dtype)
    x_tri = to_triton(x, device)
    # Flip the range to load the tensor in reverse order
    ptr = np.flip(np.arange(SIZE, dtype=np.int32), 0).copy()
    out_tri = np.empty(SIZE, np.float32)
    indirect_load[(1, 1)](ptr, x_tri, out_tri, SIZE)

    np.testing.assert_allclose(np.flip(x).astype(np.float32), to_numpy(out_tri))


@pytest.mark.parametrize("dtype", list(dtypes) + ["bfloat16"])
def test_indirect_store(dtype, device):
    check_type_supported(dtype, device)

    @triton.jit
    def indirect_store(offset_ptr, x_ptr, output_ptr, SIZE: tl.constexpr):
        linear_offsets = tl.arange(0, SIZE)
        offsets = tl.load(offset_ptr + linear_offsets)
        x = tl.load(x_ptr + linear_offsets)
        tl.store(output_ptr + offsets, x)

    SIZE = 512
    x = numpy_random(SIZE, dtype_str=dtype)
    x_tri = to_triton(x, device)
    # Flip the range to store the tensor in reverse order
    ptr = np.flip(np.arange(SIZE, dtype=np.int32), 0).copy()
    out_tri = np.empty(SIZE, np.float32)
    indirect_store[(1, 1)](ptr, x_tri, out_tri, SIZE)

    np.testing.assert_allclose(np.flip(x).astype(np.float32), to_numpy(out_tri))


@pytest.mark.parametrize("dtype", list(map(tl.dtype, tl.dtype.SINT_TYPES + tl.dtype.UINT_TYPES + tl.dtype.STANDARD_FP_TYPES)))
def test_dtype_tensor(device, dtype):

    @triton.jit
    def dtype_tensor_kernel(dtype: tl.constexpr):
        tensor = tl.zeros((1, ), dtype)

    dtype_tensor_kernel[(1, )](dtype)
