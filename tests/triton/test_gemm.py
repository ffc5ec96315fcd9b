"""Triton's python/test/unit/language/test_gemm.py, ported to minitriton: a single-block
`tl.dot` and a K-looped matmul over Triton's list of block shapes and warp counts.

Source: triton-lang/triton (MIT licence), the stored copy at commit
2fbffe2784247dc0aa25115bb9f08da0983efa7b.  Kernels unchanged; host code ours on numpy.  Triton
compares with torch's fp16 matmul at tolerances taken from a padded variant of it; here the
reference is numpy's fp32 product of the same fp16 inputs, which the fp32 accumulation matches
to rounding, so the tolerance is fixed.
"""
import numpy as np
import pytest

import minitriton as triton                 # was: import triton
import minitriton.language as tl            # was: import triton.language as tl


@triton.jit
def matmul_no_scf_kernel(
    a_ptr, b_ptr, c_ptr,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    M: tl.constexpr, N: tl.constexpr, K: tl.constexpr
):
    offs_m = tl.arange(0, M)
    offs_n = tl.arange(0, N)
    offs_k = tl.arange(0, K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    a = tl.load(a_ptrs)
    b = tl.load(b_ptrs)

    c = tl.dot(a, b)

    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, c)


def _operands(m, n, k):
    rng = np.random.default_rng(m * 131 + n * 7 + k)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    return a, b, np.empty((m, n), np.float32)


@pytest.mark.parametrize('SIZE_M,SIZE_N,SIZE_K,NUM_WARPS', [
    [128, 64, 32, 4],
    [256, 128, 16, 4],
    [128, 32, 32, 4],
    [32, 128, 64, 4],
    [128, 32, 64, 4],
    [64, 128, 128, 4],
    [64, 128, 128, 2],
])
def test_gemm_no_scf(SIZE_M, SIZE_N, SIZE_K, NUM_WARPS):
    a, b, c = _operands(SIZE_M, SIZE_N, SIZE_K)
    grid = lambda META: (1, )
    matmul_no_scf_kernel[grid](a_ptr=a, b_ptr=b, c_ptr=c,
                               stride_am=SIZE_K, stride_ak=1,
                               stride_bk=SIZE_N, stride_bn=1,
                               stride_cm=SIZE_N, stride_cn=1,
                               M=SIZE_M, N=SIZE_N, K=SIZE_K,
                               num_warps=NUM_WARPS)
    golden = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c, golden, rtol=1e-4, atol=1e-3)


@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
):
    offs_m = tl.arange(0, BLOCK_SIZE_M)
    offs_n = tl.arange(0, BLOCK_SIZE_N)
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_SIZE_K):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        accumulator += tl.dot(a, b)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk

    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, accumulator)


@pytest.mark.parametrize('SIZE_M,SIZE_N,SIZE_K,NUM_WARPS,BLOCK_SIZE_M,BLOCK_SIZE_N,BLOCK_SIZE_K', [
    # Non-forloop
    [64, 32, 64, 4, 64, 32, 64],
    [128, 64, 128, 4, 128, 64, 128],
    # K-Forloop
    [64, 32, 128, 4, 64, 32, 64],
    [128, 32, 128, 4, 128, 32, 32],
    [32, 32, 128, 4, 32, 32, 32],
    [32, 64, 128, 4, 32, 64, 32],
    [32, 128, 256, 4, 32, 128, 64],
    [64, 128, 64, 4, 64, 128, 32],
    [64, 64, 128, 4, 64, 64, 32],
    [128, 64, 64, 4, 128, 64, 32],
    [128, 64, 128, 4, 128, 64, 32],
    [64, 64, 256, 4, 64, 64, 64],
    [128, 64, 128, 4, 128, 64, 32],
    [256, 128, 64, 4, 256, 128, 16],
    [128, 64, 128, 4, 128, 64, 32],
])
def test_gemm(SIZE_M, SIZE_N, SIZE_K, NUM_WARPS, BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K):
    a, b, c = _operands(SIZE_M, SIZE_N, SIZE_K)
    grid = lambda META: (1, )
    matmul_kernel[grid](a_ptr=a, b_ptr=b, c_ptr=c,
                        stride_am=SIZE_K, stride_ak=1,
                        stride_bk=SIZE_N, stride_bn=1,
                        stride_cm=SIZE_N, stride_cn=1,
                        M=a.shape[0], N=b.shape[1], K=a.shape[1],
                        BLOCK_SIZE_M=BLOCK_SIZE_M, BLOCK_SIZE_N=BLOCK_SIZE_N, BLOCK_SIZE_K=BLOCK_SIZE_K,
                        num_warps=NUM_WARPS)
    golden = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c, golden, rtol=1e-4, atol=1e-3)
