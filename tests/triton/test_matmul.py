"""Triton's python/test/unit/language/test_matmul.py, ported to minitriton: pipelined and
persistent matmuls, and the microscaling ones (`tl.dot_scaled` with e8m0-scaled fp8, fp4 with
e8m0 or fp8 scales, 5-D blocked scale layouts, a constant scale).

Source: triton-lang/triton at commit 0072ae0b3a4841bba3b75698d4d1b0edd0a96d38 (MIT licence).
Kernels unchanged; host code ours on numpy (`helpers.py` has our versions of Triton's
MXFP4Tensor and MXScaleTensor).  Triton runs most of these on Blackwell or CDNA4 only; here
they all run.  Where Triton then reads the TTGIR/PTX (pipelining barriers, fp4 padding) only
the results are checked.  Left out: the cases whose kernels read past the end of the scale
arrays (K smaller than BLOCK_K, or more 128-row scale chunks than the array holds) -- a GPU
lets those reads through and masks what they feed, minitriton refuses an out-of-bounds load.
test_lhs_in_tmem: Triton expects every case to fail (its TMEM promotion); here the row-major
ones pass and the transposed ones fail as expected, as Triton's kernel masks the transposed
load with the untransposed mask.  Parametrizations reduced (each test says how).
"""
import math

import numpy as np
import pytest

import minitriton as triton                 # was: import triton
import minitriton.language as tl            # was: import triton.language as tl

from .helpers import (E2M1_VALUES, e8m0_from_float, e8m0_random, e8m0_values, mxfp4_pack, mxfp4_random, stride)
from .test_core_misc import f8_to_f16


@triton.jit
def matmul_kernel(  #
        a_ptr, b_ptr, output_ptr,  #
        M, N, K,  #
        stride_am, stride_ak,  #
        stride_bk, stride_bn,  #
        stride_cm, stride_cn,  #
        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,  #
        NUM_STAGES: tl.constexpr, SCALE_A: tl.constexpr = None, PRECISION: tl.constexpr = "ieee"):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    pid_m = pid % num_pid_m
    pid_n = pid // num_pid_m
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=output_ptr.dtype.element_ty)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), num_stages=NUM_STAGES):
        a = tl.load(a_ptrs)
        if SCALE_A is not None:
            a = a * SCALE_A
        b = tl.load(b_ptrs)
        accumulator = tl.dot(a, b, acc=accumulator, out_dtype=output_ptr.dtype.element_ty, input_precision=PRECISION)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask_c = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    output_ptrs = output_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(output_ptrs, accumulator, mask=mask_c)


def _e5m2_bits(rs, shape):
    """was: torch.randint(20, 40, shape, dtype=torch.uint8).view(torch.float8_e5m2)"""
    return triton.reinterpret(rs.randint(20, 40, shape).astype(np.uint8), tl.float8e5)


# Triton: seven block shapes x num_warps 4, 8 x num_ctas 1, 2; here three block shapes, one
# num_warps, num_ctas 1 (Triton skips 2 below Hopper)
@pytest.mark.parametrize("dtype_src_str", ["float32", "tensorfloat32", "float16", "float8e5"])
@pytest.mark.parametrize("dtype_dst_str", ["float32", "float16"])
@pytest.mark.parametrize("BLOCK_M, BLOCK_N, BLOCK_K, NUM_STAGES", [(128, 128, 16, 4), (64, 512, 32, 2),
                                                                   (64, 16, 16, 4)])
@pytest.mark.parametrize("NUM_WARPS", [4])
def test_simple_matmul(dtype_src_str, dtype_dst_str, BLOCK_M, BLOCK_N, BLOCK_K, NUM_STAGES, NUM_WARPS, device):
    if dtype_src_str == "float8e5" and BLOCK_K == 16:
        pytest.skip("Skipping cases small K for float8")
    if "float32" in dtype_src_str and dtype_dst_str == "float16":
        pytest.skip("Skipping unsupported case")
    M, N, K = 1024, 512, 256
    rs = np.random.RandomState(42)
    precision = "tf32" if dtype_src_str == "tensorfloat32" else "ieee"
    dtype_src_str = "float32" if dtype_src_str == "tensorfloat32" else dtype_src_str
    if dtype_src_str == "float8e5":
        a = _e5m2_bits(rs, (M, K))
        b = _e5m2_bits(rs, (K, N))
        A = f8_to_f16(a, dtype_src_str)
        B = f8_to_f16(b, dtype_src_str)
    else:
        a = rs.randn(M, K).astype(dtype_src_str)
        b = rs.randn(K, N).astype(dtype_src_str)
        A = a
        B = b
    output = np.empty((M, N), dtype=dtype_dst_str)
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N), 1)
    matmul_kernel[grid](a, b, output, M, N, K, stride(a, 0), stride(a, 1), stride(b, 0), stride(b, 1),
                        stride(output, 0), stride(output, 1), BLOCK_M, BLOCK_N, BLOCK_K, NUM_STAGES=NUM_STAGES,
                        PRECISION=precision, num_warps=NUM_WARPS)
    ref_out = np.matmul(A.astype(np.float32), B.astype(np.float32))
    output = output.astype(np.float32)
    if dtype_src_str == "float32":
        # TF32 has lower precision than torch.float32
        atol = 0.03
        rtol = 0.03
    elif dtype_dst_str == "float16":
        atol = 0.06
        rtol = 0.06
    else:
        atol = 0.01
        rtol = 0.01
    np.testing.assert_allclose(output, ref_out, atol=atol, rtol=rtol)


# persistent matmul with fused loops
@triton.jit
def simple_persistent_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak,  #
                             stride_bk, stride_bn,  #
                             stride_cm, stride_cn, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                             BLOCK_SIZE_K: tl.constexpr,  #
                             GROUP_SIZE_M: tl.constexpr, NUM_SMS: tl.constexpr,
                             DISALLOW_ACC_MULTI_BUFFER: tl.constexpr):
    start_pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    k_tiles = tl.cdiv(K, BLOCK_SIZE_K)
    num_tiles = num_pid_m * num_pid_n

    tiles_per_SM = num_tiles // NUM_SMS
    if start_pid < num_tiles % NUM_SMS:
        tiles_per_SM += 1

    tile_id = start_pid - NUM_SMS
    tile_id_c = start_pid - NUM_SMS  # remat value to use in the epilogue
    ki = -1

    offs_k_for_mask = tl.arange(0, BLOCK_SIZE_K)

    num_pid_in_group = GROUP_SIZE_M * num_pid_n

    offs_am = tl.arange(0, BLOCK_SIZE_M)
    offs_bn = tl.arange(0, BLOCK_SIZE_N)

    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)

    for _ in tl.range(0, k_tiles * tiles_per_SM, disallow_acc_multi_buffer=DISALLOW_ACC_MULTI_BUFFER):
        ki = tl.where(ki == k_tiles - 1, 0, ki + 1)
        if ki == 0:
            tile_id += NUM_SMS
            group_id = tile_id // num_pid_in_group
            first_pid_m = group_id * GROUP_SIZE_M
            group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
            pid_m = first_pid_m + (tile_id % group_size_m)
            pid_n = (tile_id % num_pid_in_group) // group_size_m

            start_m = pid_m * BLOCK_SIZE_M
            start_n = pid_n * BLOCK_SIZE_N
            offs_am = start_m + tl.arange(0, BLOCK_SIZE_M)
            offs_bn = start_n + tl.arange(0, BLOCK_SIZE_N)
            offs_am = tl.where(offs_am < M, offs_am, 0)
            offs_bn = tl.where(offs_bn < N, offs_bn, 0)
            offs_am = tl.max_contiguous(tl.multiple_of(offs_am, BLOCK_SIZE_M), BLOCK_SIZE_M)
            offs_bn = tl.max_contiguous(tl.multiple_of(offs_bn, BLOCK_SIZE_N), BLOCK_SIZE_N)
        offs_k = ki * BLOCK_SIZE_K + tl.arange(0, BLOCK_SIZE_K)
        a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
        b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

        a = tl.load(a_ptrs, mask=offs_k_for_mask[None, :] < K - ki * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k_for_mask[:, None] < K - ki * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)

        if ki == k_tiles - 1:
            tile_id_c += NUM_SMS
            group_id = tile_id_c // num_pid_in_group
            first_pid_m = group_id * GROUP_SIZE_M
            group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
            pid_m = first_pid_m + (tile_id_c % group_size_m)
            pid_n = (tile_id_c % num_pid_in_group) // group_size_m

            offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
            offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
            c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
            c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
            if (c_ptr.dtype == tl.float8e4nv):
                c = accumulator.to(tl.float8e4nv)
            else:
                c = accumulator.to(tl.float16)
            tl.store(c_ptrs, c, mask=c_mask)
            accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)


# Triton: seven block shapes x num_warps 4, 8; here three block shapes, num_warps 4
@pytest.mark.parametrize("BLOCK_M, BLOCK_N, BLOCK_K", [(128, 128, 16), (32, 32, 32), (512, 64, 16)])
@pytest.mark.parametrize("NUM_WARPS", [4])
@pytest.mark.parametrize("DISALLOW_ACC_MULTI_BUFFER", [True, False])
def test_simple_persistent_matmul(BLOCK_M, BLOCK_N, BLOCK_K, NUM_WARPS, DISALLOW_ACC_MULTI_BUFFER, device):
    M, N, K = 1024, 512, 256
    NUM_STAGES = 3
    rs = np.random.RandomState(0)
    a = rs.randn(M, K).astype(np.float16)
    b = rs.randn(K, N).astype(np.float16)
    output = np.empty((M, N), dtype=np.float16)

    # Fake small number of SMS to test that persistent kernel works reliably
    NUM_SMS = 8

    grid = (min(NUM_SMS, triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N)), )
    simple_persistent_kernel[grid](
        a, b, output,  #
        M, N, K,  #
        stride(a, 0), stride(a, 1),  #
        stride(b, 0), stride(b, 1),  #
        stride(output, 0), stride(output, 1),  #
        BLOCK_SIZE_M=BLOCK_M, BLOCK_SIZE_N=BLOCK_N, BLOCK_SIZE_K=BLOCK_K,  #
        GROUP_SIZE_M=8, NUM_SMS=NUM_SMS, DISALLOW_ACC_MULTI_BUFFER=DISALLOW_ACC_MULTI_BUFFER, num_stages=NUM_STAGES,
        num_warps=NUM_WARPS)
    ref_out = np.matmul(a.astype(np.float32), b.astype(np.float32)).astype(np.float16)

    np.testing.assert_allclose(output.astype(np.float32), ref_out.astype(np.float32), atol=0.01, rtol=0.01)


@triton.jit
def mxfp_matmul(  #
        a_ptr, b_ptr, output_ptr,  #
        a_scale, b_scale,  #
        M, N, K,  #
        stride_scale: tl.constexpr,  #
        stride_am, stride_ak,  #
        stride_bk, stride_bn,  #
        stride_cm, stride_cn,  #
        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,  #
        NUM_STAGES: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    pid_m = pid % num_pid_m
    pid_n = pid // num_pid_m
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    offs_scale_k = tl.arange(0, BLOCK_K // 32)
    a_scale_ptr = a_scale + offs_am[:, None] * stride_scale + offs_scale_k[None, :]
    b_scale_ptr = b_scale + offs_bn[:, None] * stride_scale + offs_scale_k[None, :]
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=output_ptr.dtype.element_ty)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), num_stages=NUM_STAGES):
        k_remaining = K - k * BLOCK_K
        valid_k = offs_k < k_remaining
        a = tl.load(a_ptrs, mask=valid_k[None, :], other=0.)
        b = tl.load(b_ptrs, mask=valid_k[:, None], other=0.)
        scale_a = tl.load(a_scale_ptr)
        scale_b = tl.load(b_scale_ptr)
        accumulator = tl.dot_scaled(a, scale_a, "e5m2", b, scale_b, "e5m2", accumulator)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
        a_scale_ptr += BLOCK_K // 32
        b_scale_ptr += BLOCK_K // 32
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    output_ptrs = output_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(output_ptrs, accumulator, mask=c_mask)


# Triton: six shapes x six block shapes x stages 1, 3 x num_warps 4, 8; here the shapes with K at
# least BLOCK_K (see above), two block shapes, one of each of the others
@pytest.mark.parametrize("M, N, K", [(1024, 512, 256), (128, 256, 256), (128, 128, 128)])
@pytest.mark.parametrize("BLOCK_M, BLOCK_N, BLOCK_K", [(128, 128, 128), (128, 64, 128)])
@pytest.mark.parametrize("NUM_STAGES", [1])
@pytest.mark.parametrize("NUM_WARPS", [4])
def test_mxfp(M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, NUM_STAGES, NUM_WARPS, device):
    rs = np.random.RandomState(42)
    dtype_src_str = "float8e5"
    a = _e5m2_bits(rs, (M, K))
    a_f16 = f8_to_f16(a, dtype_src_str)
    b = _e5m2_bits(rs, (K, N))
    b_f16 = f8_to_f16(b, dtype_src_str)
    a_scale = rs.randint(0, 130, (M, K // 32)).astype(np.uint8)
    b_scale = rs.randint(0, 130, (N, K // 32)).astype(np.uint8)

    output = np.empty((M, N), dtype=np.float32)
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N), 1)
    mxfp_matmul[grid](a, b, output, a_scale, b_scale, M, N, K, stride(a_scale, 0), stride(a, 0), stride(a, 1),
                      stride(b, 0), stride(b, 1), stride(output, 0), stride(output, 1), BLOCK_M, BLOCK_N, BLOCK_K,
                      NUM_STAGES=NUM_STAGES, num_warps=NUM_WARPS)
    a_scale_f32 = np.repeat(e8m0_values(a_scale), 32, axis=1)
    b_scale_f32 = np.repeat(e8m0_values(b_scale), 32, axis=1)
    # b_scales are always col major
    b_scale_f32 = np.ascontiguousarray(b_scale_f32.T)
    ref_out = np.matmul(a_f16.astype(np.float32) * a_scale_f32, b_f16.astype(np.float32) * b_scale_f32)
    np.testing.assert_allclose(output, ref_out, atol=0.0001, rtol=0.0001)


@triton.jit
def block_scale_mxfp_matmul(  #
        a_ptr, b_ptr, output_ptr,  #
        a_scale, b_scale,  #
        M, N, K,  #
        stride_sk, stride_sb, stride_sc, stride_sd: tl.constexpr,  # Need tl.constexpr to pipeline scale load. Why?
        stride_am, stride_ak,  #
        stride_bk, stride_bn,  #
        stride_cm, stride_cn,  #
        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,  #
        NUM_STAGES: tl.constexpr, USE_2D_SCALE_LOAD: tl.constexpr):
    ## This kernel assumes a_scale and b_scale are coming in with shapes
    ## [BLOCK_M(or N) // 128, BLOCK_K // 128, 32, 4, 4] for optimial performance
    ## on nvidia sm100+ HW
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    pid_m = pid % num_pid_m
    pid_n = pid // num_pid_m
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)

    offs_sm = (pid_m * (BLOCK_M // 128) + tl.arange(0, BLOCK_M // 128))
    offs_sn = (pid_n * (BLOCK_N // 128) + tl.arange(0, BLOCK_N // 128))

    if USE_2D_SCALE_LOAD:
        offs_inner = tl.arange(0, (BLOCK_K // 128) * 32 * 4 * 4)
        a_scale_ptr = a_scale + offs_sm[:, None] * stride_sk + offs_inner[None, :]
        b_scale_ptr = b_scale + offs_sn[:, None] * stride_sk + offs_inner[None, :]
    else:
        offs_sk = tl.arange(0, (BLOCK_K // 128))
        offs_sc = tl.arange(0, 32)
        offs_sd = tl.arange(0, 4)
        a_scale_ptr = a_scale + (offs_sm[:, None, None, None, None] * stride_sk + offs_sk[None, :, None, None, None] *
                                 stride_sb + offs_sc[None, None, :, None, None] * stride_sc +
                                 offs_sd[None, None, None, :, None] * stride_sd + offs_sd[None, None, None, None, :])
        b_scale_ptr = b_scale + (offs_sn[:, None, None, None, None] * stride_sk + offs_sk[None, :, None, None, None] *
                                 stride_sb + offs_sc[None, None, :, None, None] * stride_sc +
                                 offs_sd[None, None, None, :, None] * stride_sd + offs_sd[None, None, None, None, :])

    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=output_ptr.dtype.element_ty)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), num_stages=NUM_STAGES):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        scale_a = tl.load(a_scale_ptr)
        scale_b = tl.load(b_scale_ptr)

        if USE_2D_SCALE_LOAD:
            scale_a = scale_a.reshape(BLOCK_M // 128, BLOCK_K // 128, 32, 4, 4)
            scale_b = scale_b.reshape(BLOCK_N // 128, BLOCK_K // 128, 32, 4, 4)

        # Scales are coming in for optimial performance, but we reshape here for
        # the canonical inputs to dot_scaled
        # These reshapes and transposes will be optimized away during lowering
        scale_a = scale_a.trans(0, 3, 2, 1, 4).reshape(BLOCK_M, BLOCK_K // 32)
        scale_b = scale_b.trans(0, 3, 2, 1, 4).reshape(BLOCK_N, BLOCK_K // 32)
        accumulator = tl.dot_scaled(a, scale_a, "e5m2", b, scale_b, "e5m2", accumulator)

        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
        a_scale_ptr += BLOCK_K // 128 * stride_sb
        b_scale_ptr += BLOCK_K // 128 * stride_sb
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    output_ptrs = output_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(output_ptrs, accumulator, mask=c_mask)


# Triton: three shapes x five block shapes x stages 1, 2, 4 x both scale loads; here the two
# shapes that are not multiples of the blocks, the block shapes with BLOCK_M and BLOCK_N 128 (see above),
# one stage count
@pytest.mark.parametrize("M, N, K", [(998, 111, 512), (63, 128, 512)])
@pytest.mark.parametrize("BLOCK_M, BLOCK_N, BLOCK_K", [(128, 128, 128), (128, 128, 256)])
@pytest.mark.parametrize("NUM_STAGES", [2])
@pytest.mark.parametrize("USE_2D_SCALE_LOAD", [False, True])
def test_blocked_scale_mxfp(M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, NUM_STAGES, USE_2D_SCALE_LOAD, device):
    rs = np.random.RandomState(42)
    dtype_src_str = "float8e5"
    a = _e5m2_bits(rs, (M, K))
    A = f8_to_f16(a, dtype_src_str)
    b = _e5m2_bits(rs, (K, N))
    B = f8_to_f16(b, dtype_src_str)
    ceildiv = lambda a, b: math.ceil(a / b)  # noqa: E731
    a_scale = rs.randint(0, 130, (ceildiv(M, 128), ceildiv(K, 128), 32, 4, 4)).astype(np.uint8)
    b_scale = rs.randint(0, 130, (ceildiv(N, 128), ceildiv(K, 128), 32, 4, 4)).astype(np.uint8)

    output = np.empty((M, N), dtype=np.float32)
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N), 1)
    block_scale_mxfp_matmul[grid](a, b, output, a_scale, b_scale, M, N, K, stride(a_scale, 0), stride(a_scale, 1),
                                  stride(a_scale, 2), stride(a_scale, 3), stride(a, 0), stride(a, 1), stride(b, 0),
                                  stride(b, 1), stride(output, 0), stride(output, 1), BLOCK_M, BLOCK_N, BLOCK_K,
                                  NUM_STAGES=NUM_STAGES, USE_2D_SCALE_LOAD=USE_2D_SCALE_LOAD)

    def flatten_scale(scale):
        num_chunk_m, num_chunk_k, _, _, _ = scale.shape
        return np.ascontiguousarray(scale.transpose(0, 3, 2, 1, 4).reshape(num_chunk_m * 128, num_chunk_k * 4))

    a_scale_f32 = flatten_scale(e8m0_values(a_scale))[:M]
    b_scale_f32 = flatten_scale(e8m0_values(b_scale))[:N]
    a_scale_f32 = np.repeat(a_scale_f32, 32, axis=1)
    b_scale_f32 = np.repeat(b_scale_f32, 32, axis=1)
    # b_scales are always col major
    b_scale_f32 = np.ascontiguousarray(b_scale_f32.T)
    ref_out = np.matmul(A.astype(np.float32) * a_scale_f32, B.astype(np.float32) * b_scale_f32)
    np.testing.assert_allclose(output, ref_out, atol=0.0001, rtol=0.0001)


@triton.jit
def lhs_in_tmem_kernel(  #
        a_ptr, b_ptr, output_ptr,  #
        stride_am, stride_ak,  #
        stride_bk, stride_bn,  #
        stride_cm, stride_cn,  #
        M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, A_TRANS: tl.constexpr, BLOCK_M: tl.constexpr,
        BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    pid_m = pid % num_pid_m
    pid_n = pid // num_pid_m
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)

    if not A_TRANS:
        a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    else:
        a_ptrs = a_ptr + (offs_k[:, None] * stride_am + offs_am[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), num_stages=1):
        k_remaining = K - k * BLOCK_K
        valid_k = offs_k < k_remaining
        m_remaining = M - pid_m * BLOCK_M
        valid_m = offs_am < m_remaining
        a = tl.load(a_ptrs, mask=(valid_k[None, :] & valid_m[:, None]), other=0.0)
        if A_TRANS:
            a = a.T
        n_remaining = N - pid_n * BLOCK_N
        valid_n = offs_bn < n_remaining
        b = tl.load(b_ptrs, mask=(valid_k[:, None] & valid_n[None, :]), other=0.0)
        accumulator = tl.dot(a, b, acc=accumulator)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)

    output_ptrs = output_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    mask_c = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(output_ptrs, accumulator, mask=mask_c)


# Triton: two shapes x six block shapes; here the small shape with three of them
@pytest.mark.parametrize("M, N, K", [(128, 64, 64)])
@pytest.mark.parametrize("BLOCK_M, BLOCK_N, BLOCK_K", [(128, 128, 128), (128, 128, 64), (128, 64, 128)])
@pytest.mark.parametrize("a_trans, dtype_src_str", [(False, d) for d in ["float32", "float16", "float8e5"]] + [
    pytest.param(True, d, marks=pytest.mark.xfail(
        strict=True, reason="Triton's kernel masks the transposed load with the untransposed mask"))
    for d in ["float32", "float16"]])     # (transposed fp8 left out: its wrongly masked terms fall below atol)
def test_lhs_in_tmem(M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, a_trans, dtype_src_str, device):
    rs = np.random.RandomState(42)
    if dtype_src_str == "float8e5":
        a = _e5m2_bits(rs, (M, K))
        if (a_trans):
            a = a.T
        b = _e5m2_bits(rs, (K, N))
        A = f8_to_f16(np.ascontiguousarray(a), dtype_src_str)
        B = f8_to_f16(b, dtype_src_str)
    else:
        a = rs.randn(M, K).astype(dtype_src_str)
        if (a_trans):
            a = a.T
        b = rs.randn(K, N).astype(dtype_src_str)
        A = a
        B = b
    output = np.empty((M, N), dtype=np.float16)
    grid = (1, 1)
    lhs_in_tmem_kernel[grid](a, b, output, stride(a, 0), stride(a, 1), stride(b, 0), stride(b, 1), stride(output, 0),
                             stride(output, 1), M, N, K, A_TRANS=a_trans, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
                             BLOCK_K=BLOCK_K)
    ref_out = np.matmul((A if not a_trans else A.T).astype(np.float32), B.astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(output.astype(np.float32), ref_out.astype(np.float32), atol=0.03, rtol=0.03)


@triton.jit
def lhs_in_tmem_kernel_mxfp(  #
        a_ptr, b_ptr, output_ptr,  #
        a_scale, b_scale,  #
        stride_scale,  #
        stride_am, stride_ak,  #
        stride_bk, stride_bn,  #
        stride_cm, stride_cn,  #
        M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    offs_am = tl.arange(0, M)
    offs_bn = tl.arange(0, N)
    offs_k = tl.arange(0, K)
    offs_scale_k = tl.arange(0, K // 32)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    a_scale_ptr = a_scale + offs_am[:, None] * stride_scale + offs_scale_k[None, :]
    b_scale_ptr = b_scale + offs_bn[:, None] * stride_scale + offs_scale_k[None, :]
    a = tl.load(a_ptrs)
    b = tl.load(b_ptrs)
    scale_a = tl.load(a_scale_ptr)
    scale_b = tl.load(b_scale_ptr)
    accumulator = tl.dot_scaled(a, scale_a, "e5m2", b, scale_b, "e5m2")
    offs_cm = tl.arange(0, M)
    offs_cn = tl.arange(0, N)
    output_ptrs = output_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(output_ptrs, accumulator)


def test_lhs_in_tmem_mxfp(device):
    M, N, K = 128, 64, 32
    rs = np.random.RandomState(42)
    a = rs.randint(20, 40, (M, K)).astype(np.uint8)
    b = rs.randint(20, 40, (K, N)).astype(np.uint8)
    A = f8_to_f16(a, "float8e5")
    B = f8_to_f16(b, "float8e5")
    a_scale = rs.randint(124, 130, (M, K // 32)).astype(np.uint8)
    b_scale = rs.randint(124, 130, (N, K // 32)).astype(np.uint8)
    output = np.empty((M, N), dtype=np.float16)
    grid = (1, 1)
    lhs_in_tmem_kernel_mxfp[grid](a, b, output, a_scale, b_scale, stride(a_scale, 0), stride(a, 0), stride(a, 1),
                                  stride(b, 0), stride(b, 1), stride(output, 0), stride(output, 1), M, N, K)
    a_scale_f32 = np.repeat(e8m0_values(a_scale), 32, axis=1)
    b_scale_f32 = np.ascontiguousarray(np.repeat(e8m0_values(b_scale), 32, axis=1).T)
    ref_out = np.matmul(A.astype(np.float32) * a_scale_f32, B.astype(np.float32) * b_scale_f32).astype(np.float16)
    np.testing.assert_allclose(output.astype(np.float32), ref_out.astype(np.float32), atol=0.003, rtol=0.003)


@triton.jit
def block_scale_fp4_matmul(  #
        a_ptr, b_ptr, output_ptr,  #
        a_scale, b_scale,  #
        M, N, K,  #
        stride_scale,  #
        stride_am, stride_ak,  #
        stride_bk, stride_bn,  #
        stride_cm, stride_cn,  #
        VEC_SIZE: tl.constexpr,  #
        BLOCK_M: tl.constexpr,  #
        BLOCK_N: tl.constexpr,  #
        BLOCK_K: tl.constexpr,  #
        NUM_STAGES: tl.constexpr):  #
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    pid_m = pid % num_pid_m
    pid_n = pid // num_pid_m
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N

    # Two e2m1 values per K
    offs_k = tl.arange(0, BLOCK_K // 2)
    offs_scale_k = tl.arange(0, BLOCK_K // VEC_SIZE)
    if a_scale is not None:
        a_scale_ptr = a_scale + offs_am[:, None] * stride_scale + offs_scale_k[None, :]
    if b_scale is not None:
        b_scale_ptr = b_scale + offs_bn[:, None] * stride_scale + offs_scale_k[None, :]
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=output_ptr.dtype.element_ty)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), num_stages=NUM_STAGES):
        k_remaining = tl.cdiv(K - k * BLOCK_K, 2)
        valid_k = offs_k < k_remaining
        a = tl.load(a_ptrs, mask=valid_k[None, :], other=0)
        b = tl.load(b_ptrs, mask=valid_k[:, None], other=0)
        if a_scale is not None:
            scale_a = tl.load(a_scale_ptr)
        else:
            scale_a = None
        if b_scale is not None:
            scale_b = tl.load(b_scale_ptr)
        else:
            scale_b = None
        accumulator = tl.dot_scaled(a, scale_a, "e2m1", b, scale_b, "e2m1", accumulator)
        a_ptrs += (BLOCK_K // 2) * stride_ak
        b_ptrs += (BLOCK_K // 2) * stride_bk
        if a_scale is not None:
            a_scale_ptr += BLOCK_K // VEC_SIZE
        if b_scale is not None:
            b_scale_ptr += BLOCK_K // VEC_SIZE
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    output_ptrs = output_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(output_ptrs, accumulator, mask=c_mask)


# Triton: two shapes x six block shapes x with/without each scale x two scale types; here the
# shape with K at least BLOCK_K (see above), two block shapes, all the rest
@pytest.mark.parametrize("M, N, K", [(1024, 512, 256)])
@pytest.mark.parametrize("BLOCK_M, BLOCK_N, BLOCK_K", [(128, 128, 128), (128, 64, 128)])
@pytest.mark.parametrize("with_a_scale", [True, False])
@pytest.mark.parametrize("with_b_scale", [True, False])
@pytest.mark.parametrize(("scale_type", "VEC_SIZE"), [("float8_e8m0fnu", 32), ("float8_e4m3fn", 16)],
                         ids=["mxfp4", "nvfp4"])
def test_block_scale_fp4(M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, VEC_SIZE, with_a_scale, with_b_scale, scale_type, device):
    NUM_STAGES = 1
    rs = np.random.RandomState(42)
    a_codes = mxfp4_random((M, K), rs)
    a = mxfp4_pack(a_codes, dim=1)
    # Generate b with k-major layout, pack two e2m1 along k, then logical transpose to K, N
    b_codes = mxfp4_random((N, K), rs)
    b = mxfp4_pack(b_codes, dim=1).T
    # No need to pack along K since we convert each e2m1 to f32 directly for the reference matmul
    b_ref = E2M1_VALUES[b_codes].T

    a_size = (M, (K + VEC_SIZE - 1) // VEC_SIZE)
    b_size = (N, (K + VEC_SIZE - 1) // VEC_SIZE)
    a_scale = rs.rand(*a_size).astype(np.float32)
    b_scale = rs.rand(*b_size).astype(np.float32)
    if scale_type == "float8_e8m0fnu":
        a_scale = e8m0_from_float(a_scale)
        b_scale = e8m0_from_float(b_scale)
        a_scale_ref, b_scale_ref = e8m0_values(a_scale), e8m0_values(b_scale)
    elif scale_type == "float8_e4m3fn":
        a_scale = triton.reinterpret(a_scale.astype(tl.float8e4nv.np).view(np.uint8), tl.float8e4nv)
        b_scale = triton.reinterpret(b_scale.astype(tl.float8e4nv.np).view(np.uint8), tl.float8e4nv)
        a_scale_ref, b_scale_ref = a_scale.astype(np.float32), b_scale.astype(np.float32)

    a_scale_ref = np.repeat(a_scale_ref, VEC_SIZE, axis=1)[:M, :K]
    b_scale_ref = np.ascontiguousarray(np.repeat(b_scale_ref, VEC_SIZE, axis=1).T)[:K, :N]
    stride_scale = stride(a_scale, 0)
    if not with_a_scale:
        a_scale = None
        a_scale_ref = 1.0
    if not with_b_scale:
        b_scale = None
        b_scale_ref = 1.0
    ref_out = np.matmul(E2M1_VALUES[a_codes] * a_scale_ref, b_ref * b_scale_ref)

    output = np.empty((M, N), dtype=np.float32)
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N), 1)
    block_scale_fp4_matmul[grid](a, b, output, a_scale, b_scale, M, N, K, stride_scale, stride(a, 0), stride(a, 1),
                                 stride(b, 0), stride(b, 1), stride(output, 0), stride(output, 1), VEC_SIZE, BLOCK_M,
                                 BLOCK_N, BLOCK_K, NUM_STAGES=NUM_STAGES)

    np.testing.assert_allclose(output, ref_out, atol=1e-2, rtol=1e-2)


@triton.jit
def mxfp8_mxfp4_matmul(  #
        a_ptr, b_ptr, output_ptr,  #
        a_scale, b_scale,  #
        M, N, K,  #
        stride_scale,  #
        stride_am, stride_ak,  #
        stride_bk, stride_bn,  #
        stride_cm, stride_cn,  #
        tensor_scale: tl.constexpr,  #
        DTYPE_A: tl.constexpr,  #
        DTYPE_B: tl.constexpr,  #
        BLOCK_M: tl.constexpr,  #
        BLOCK_N: tl.constexpr,  #
        BLOCK_K: tl.constexpr,  #
        NUM_STAGES: tl.constexpr):  #
    DIV_FACTOR_A: tl.constexpr = 2 if DTYPE_A == "e2m1" else 1
    DIV_FACTOR_B: tl.constexpr = 2 if DTYPE_B == "e2m1" else 1
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    pid_m = pid % num_pid_m
    pid_n = pid // num_pid_m
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_ak = tl.arange(0, BLOCK_K // DIV_FACTOR_A)
    offs_bk = tl.arange(0, BLOCK_K // DIV_FACTOR_B)
    offs_scale_k = tl.arange(0, BLOCK_K // 32)

    if a_scale is not None:
        a_scale_ptr = a_scale + offs_am[:, None] * stride_scale + offs_scale_k[None, :]
    if b_scale is not None:
        b_scale_ptr = b_scale + offs_bn[:, None] * stride_scale + offs_scale_k[None, :]
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_ak[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_bk[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=output_ptr.dtype.element_ty)

    for k in tl.range(0, tl.cdiv(K, BLOCK_K), num_stages=NUM_STAGES):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        if a_scale is not None:
            if tensor_scale:
                scale_a = tl.load(a_scale_ptr)
            else:
                scale_a = tl.full(a_scale_ptr.shape, a_scale.to(tl.int8), dtype=tl.int8)
        else:
            scale_a = None
        if b_scale is not None:
            scale_b = tl.load(b_scale_ptr)
        else:
            scale_b = None
        accumulator = tl.dot_scaled(a, scale_a, DTYPE_A, b, scale_b, DTYPE_B, accumulator)
        a_ptrs += (BLOCK_K // DIV_FACTOR_A) * stride_ak
        b_ptrs += (BLOCK_K // DIV_FACTOR_B) * stride_bk
        if a_scale is not None:
            a_scale_ptr += BLOCK_K // 32
        if b_scale is not None:
            b_scale_ptr += BLOCK_K // 32

    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    output_ptrs = output_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(output_ptrs, accumulator, mask=c_mask)


def _mx_operand(rs, dtype: str, size0: int, size1: int, k_dim: int, transpose: bool = True):
    """Triton's create_operand: the operand as the kernel reads it, and its float32 values."""
    if dtype in ("float8e5", "float8e4nv"):
        fp8 = getattr(tl, dtype)
        if transpose:
            v = triton.reinterpret(rs.randint(20, 40, (size0, size1)).astype(np.uint8), fp8)
            v_ref = f8_to_f16(v, dtype).astype(np.float32)
        else:
            v = triton.reinterpret(rs.randint(20, 40, (size1, size0)).astype(np.uint8), fp8).T
            v_ref = f8_to_f16(np.ascontiguousarray(v.T), dtype).astype(np.float32).T
    else:
        # float4
        if transpose:
            codes = mxfp4_random((size0, size1), rs)
            v = mxfp4_pack(codes, dim=k_dim)
            v_ref = E2M1_VALUES[codes]
        else:
            codes = mxfp4_random((size1, size0), rs)
            v = mxfp4_pack(codes, dim=(k_dim + 1) % 2).T
            v_ref = E2M1_VALUES[codes].T
    return v, v_ref


# Triton: six block shapes x stages 1, 3 x B_TRANS x CONST_SCALE x 3 x 3 data types x with and
# without each scale; here one block shape and stage count, all data-type pairs with both scales,
# and for one pair the constant scale, the transposed B and the missing scales
@pytest.mark.parametrize("M, N, K", [(1024, 512, 512)])
@pytest.mark.parametrize("BLOCK_M, BLOCK_N, BLOCK_K", [(128, 128, 128)])
@pytest.mark.parametrize("NUM_STAGES", [1])
@pytest.mark.parametrize("B_TRANS, CONST_SCALE, A_DATA_TYPE, B_DATA_TYPE, WITH_A_SCALE, WITH_B_SCALE", [
    (True, False, a, b, True, True) for a in ["float8e5", "float8e4nv", "float4"]
    for b in ["float8e5", "float8e4nv", "float4"]] + [
    (True, True, "float8e5", "float4", True, True), (False, False, "float8e5", "float4", True, True),
    (False, False, "float4", "float4", True, True), (True, False, "float8e5", "float4", False, True),
    (True, False, "float8e5", "float8e4nv", True, False)])
def test_mxfp8_mxfp4_matmul(M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, NUM_STAGES, B_TRANS, CONST_SCALE, A_DATA_TYPE,
                            B_DATA_TYPE, WITH_A_SCALE, WITH_B_SCALE, device):
    rs = np.random.RandomState(42)
    dtype_converter = {'float8e5': 'e5m2', 'float8e4nv': 'e4m3', 'float4': 'e2m1'}

    a, a_ref = _mx_operand(rs, A_DATA_TYPE, M, K, 1)
    b, b_ref = _mx_operand(rs, B_DATA_TYPE, K, N, 0, B_TRANS)

    a_scale = e8m0_random((M, (K + 32 - 1) // 32), rs, high=32.0)
    b_scale = e8m0_random((N, (K + 32 - 1) // 32), rs, high=32.0)

    a_scale_ref = np.repeat(e8m0_values(a_scale), 32, axis=1)[:M, :K]
    if CONST_SCALE:
        a_scale_ref = np.full_like(a_scale_ref, 2.0)
        a_scale = 128  # 2.0 in e8m0
    b_scale_ref = np.ascontiguousarray(np.repeat(e8m0_values(b_scale), 32, axis=1).T)[:K, :N]
    stride_scale = stride(b_scale, 0)
    if not WITH_A_SCALE:
        a_scale = None
        a_scale_ref = 1.0
    if not WITH_B_SCALE:
        b_scale = None
        b_scale_ref = 1.0

    # in float64 beside the size of its terms: the kernel sums in fp32, in its own order, so where a
    # sum of terms near 1e4 cancels to 0.19 (one element in half a million here) its rounding alone
    # exceeds Triton's atol; the allowance is a few fp32 roundings of the terms' magnitude
    a64, b64 = np.float64(a_ref * a_scale_ref), np.float64(b_ref * b_scale_ref)
    ref_out = np.matmul(a64, b64)
    rounding = 8 * np.finfo(np.float32).eps * (np.abs(a64) @ np.abs(b64))

    output = np.empty((M, N), dtype=np.float32)
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N), 1)
    mxfp8_mxfp4_matmul[grid](a, b, output, a_scale, b_scale, M, N, K, stride_scale, stride(a, 0), stride(a, 1),
                             stride(b, 0), stride(b, 1), stride(output, 0), stride(output, 1), not CONST_SCALE,
                             dtype_converter[A_DATA_TYPE], dtype_converter[B_DATA_TYPE], BLOCK_M, BLOCK_N,
                             BLOCK_K, NUM_STAGES=NUM_STAGES)
    assert (np.abs(output - ref_out) <= 1e-3 + 1e-3 * np.abs(ref_out) + rounding).all()
