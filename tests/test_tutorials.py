"""Kernels written the way Triton's tutorials write them run unchanged but for the imports.

These are our own kernels in the tutorials' style: a persistent-loop fused softmax, layer
norm forward and backward (with a spin lock built on atomic_cas), and a matmul with a jitted
activation helper, launched with `triton.cdiv`-style grids and launch options.
"""
import numpy as np

import minitriton as triton            # was: import triton
import minitriton.language as tl      # was: import triton.language as tl


@triton.jit
def softmax_persistent(out_ptr, in_ptr, in_row_stride, out_row_stride, n_rows, n_cols,
                       BLOCK_SIZE: tl.constexpr, num_stages: tl.constexpr):
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
        cols = tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        row = tl.load(in_ptr + row_idx * in_row_stride + cols, mask=mask, other=-float("inf"))
        shifted = row - tl.max(row, axis=0)
        num = tl.exp(shifted)
        tl.store(out_ptr + row_idx * out_row_stride + cols, num / tl.sum(num, axis=0), mask=mask)


def test_persistent_softmax():
    x = np.random.default_rng(0).standard_normal((123, 517)).astype(np.float32)
    y = np.empty_like(x)
    softmax_persistent[(8, 1, 1)](y, x, x.strides[0] // 4, y.strides[0] // 4, x.shape[0], x.shape[1],
                                  BLOCK_SIZE=triton.next_power_of_2(x.shape[1]), num_stages=2, num_warps=4)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)


@triton.jit
def layer_norm_fwd(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        acc += tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        acc += x * x
    rstd = 1 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        tl.store(Y + cols, (x - mean) * rstd * w + b, mask=mask)


@triton.jit
def weight_grad_partial(DY, X, Mean, Rstd, DW, Lock, Count, stride, N, GROUP: tl.constexpr, BLOCK: tl.constexpr):
    """dW accumulated by groups of rows under a spin lock, the tutorial's pattern."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * stride + cols, mask=mask, other=0.).to(tl.float32)
    dy = tl.load(DY + row * stride + cols, mask=mask, other=0.).to(tl.float32)
    xhat = (x - tl.load(Mean + row)) * tl.load(Rstd + row)
    lock_id = row % GROUP
    Lock += lock_id
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count + lock_id)
    partial = dy * xhat
    if count != 0:
        partial += tl.load(DW + lock_id * N + cols, mask=mask)
    tl.store(DW + lock_id * N + cols, partial, mask=mask)
    tl.store(Count + lock_id, count + 1)
    tl.atomic_xchg(Lock, 0)


def test_layer_norm_forward_and_locked_weight_gradient():
    rng = np.random.default_rng(1)
    M, N = 37, 300
    x = rng.standard_normal((M, N)).astype(np.float32)
    w, b = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    y, mean, rstd = np.empty_like(x), np.empty(M, np.float32), np.empty(M, np.float32)
    layer_norm_fwd[(M,)](x, y, w, b, mean, rstd, x.strides[0] // 4, N, 1e-5, BLOCK_SIZE=128)
    mu, var = x.mean(1, keepdims=True), x.var(1, keepdims=True)
    np.testing.assert_allclose(y, (x - mu) / np.sqrt(var + 1e-5) * w + b, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(mean, mu[:, 0], rtol=1e-5, atol=1e-6)

    dy = rng.standard_normal((M, N)).astype(np.float32)
    group = 4
    dw = np.zeros((group, N), np.float32)
    lock, count = np.zeros(group, np.int32), np.zeros(group, np.int32)
    weight_grad_partial[(M,)](dy, x, mean, rstd, dw, lock, count, N, N, GROUP=group, BLOCK=512)
    xhat = (x - mean[:, None]) * rstd[:, None]
    np.testing.assert_allclose(dw.sum(0), (dy * xhat).sum(0), rtol=1e-4, atol=1e-4)
    assert (lock == 0).all() and count.sum() == M


@triton.jit
def leaky_relu(x):
    return tl.where(x >= 0, x, 0.01 * x)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                  GROUP_SIZE_M: tl.constexpr, ACTIVATION: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    if ACTIVATION == "leaky_relu":
        accumulator = leaky_relu(accumulator)
    c = accumulator.to(tl.float16)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


def test_tutorial_matmul_with_jitted_activation():
    rng = np.random.default_rng(2)
    M, N, K = 300, 200, 150  # ragged, with a partial last GROUP_SIZE_M group
    a, b = rng.standard_normal((M, K)).astype(np.float16), rng.standard_normal((K, N)).astype(np.float16)
    c = np.empty((M, N), np.float16)
    grid = lambda META: (triton.cdiv(M, META["BLOCK_SIZE_M"]) * triton.cdiv(N, META["BLOCK_SIZE_N"]),)
    matmul_kernel[grid](a, b, c, M, N, K, K, 1, N, 1, N, 1, BLOCK_SIZE_M=32, BLOCK_SIZE_N=64, BLOCK_SIZE_K=32,
                        GROUP_SIZE_M=4, ACTIVATION="leaky_relu", num_warps=4, num_stages=3)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    ref = np.where(ref >= 0, ref, 0.01 * ref)
    assert np.abs(c - ref).max() <= 0.5 * np.spacing(np.abs(ref).astype(np.float16)).max() + 150 * 2.0 ** -24 * 200
