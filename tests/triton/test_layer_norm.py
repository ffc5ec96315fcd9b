"""Triton's python/tutorials/05-layer-norm.py, its `test_layer_norm` ported to minitriton: the fused
forward pass, the backward pass whose programs add their dW and dB partial sums into
GROUP_SIZE_M buffers under a spin lock (the first holder of a buffer stores instead of adding,
told by a counter beside the locks), and the kernel that sums the buffers.

Source: triton-lang/triton (MIT licence), the stored copy at commit
0a99ae9ad2f7872191b7acb1f7afb11cdb5382e5.  Kernels unchanged; host code ours on numpy: the
autograd Function's forward and backward become the two functions below (the same launches and
heuristics), torch's layer norm and its gradients a numpy reference in float32, and
`triton.testing.assert_almost_equal` numpy's at the same decimals.  Triton's test runs M, N =
1151, 8192 in fp16; here also 1151 x 1000 (N not a power of two: masked columns).
"""
import numpy as np
import pytest

import minitriton as triton                 # was: import triton
import minitriton.language as tl            # was: import triton.language as tl


# Forward Pass
@triton.jit
def _layer_norm_fwd_fused(X, Y, W, B, M, V, stride, N, eps,
                          BLOCK_SIZE: tl.constexpr):
    # position of elements processed by this program
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < N
    # offset data pointers to start at the row of interest
    X += row * stride
    Y += row * stride
    # load data and cast to float32
    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    # compute mean
    mean = tl.sum(x, axis=0) / N
    # compute std
    xmean = tl.where(mask, x - mean, 0.)
    var = tl.sum(xmean * xmean, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    xhat = xmean * rstd
    # write-back mean/rstd
    tl.store(M + row, mean)
    tl.store(V + row, rstd)
    # multiply by weight and add bias
    w = tl.load(W + cols, mask=mask)
    b = tl.load(B + cols, mask=mask)
    y = xhat * w + b
    # write-back
    tl.store(Y + cols, y, mask=mask)


# Backward pass (DX + partial DW + partial DB)
@triton.jit
def _layer_norm_bwd_dx_fused(DX, DY, DW, DB, X, W, B, M, V, Lock, stride, N, eps,
                             GROUP_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    # position of elements processed by this program
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    # offset data pointers to start at the row of interest
    X += row * stride
    DY += row * stride
    DX += row * stride
    # offset locks and weight/bias gradient pointer
    # each kernel instance accumulates partial sums for
    # DW and DB into one of GROUP_SIZE_M independent buffers
    # these buffers stay in the L2, which allow this kernel
    # to be fast
    lock_id = row % GROUP_SIZE_M
    Lock += lock_id
    Count = Lock + GROUP_SIZE_M
    DW = DW + lock_id * N + cols
    DB = DB + lock_id * N + cols
    # load data to SRAM
    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(DY + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    mean = tl.load(M + row)
    rstd = tl.load(V + row)
    # compute dx
    xhat = (x - mean) * rstd
    wdy = w * dy
    xhat = tl.where(mask, xhat, 0.)
    wdy = tl.where(mask, wdy, 0.)
    mean1 = tl.sum(xhat * wdy, axis=0) / N
    mean2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * mean1 + mean2)) * rstd
    # write-back dx
    tl.store(DX + cols, dx, mask=mask)
    # accumulate partial sums for dw/db
    partial_dw = (dy * xhat).to(w.dtype)
    partial_db = (dy).to(w.dtype)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    # first store doesn't accumulate
    if count == 0:
        tl.atomic_xchg(Count, 1)
    else:
        partial_dw += tl.load(DW, mask=mask)
        partial_db += tl.load(DB, mask=mask)
    tl.store(DW, partial_dw, mask=mask)
    tl.store(DB, partial_db, mask=mask)
    # release lock
    tl.atomic_xchg(Lock, 0)

# Backward pass (total DW + total DB)


@triton.jit
def _layer_norm_bwd_dwdb(DW, DB, FINAL_DW, FINAL_DB, M, N,
                         BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    dw = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for i in range(0, M, BLOCK_SIZE_M):
        rows = i + tl.arange(0, BLOCK_SIZE_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(DW + offs, mask=mask, other=0.)
        db += tl.load(DB + offs, mask=mask, other=0.)
    sum_dw = tl.sum(dw, axis=0)
    sum_db = tl.sum(db, axis=0)
    tl.store(FINAL_DW + cols, sum_dw, mask=cols < N)
    tl.store(FINAL_DB + cols, sum_db, mask=cols < N)


def forward(x, weight, bias, eps):
    """LayerNorm.forward: the same heuristics and launch."""
    y = np.empty_like(x)
    x_arg = x.reshape(-1, x.shape[-1])
    M, N = x_arg.shape
    mean = np.empty((M, ), dtype=np.float32)
    rstd = np.empty((M, ), dtype=np.float32)
    MAX_FUSED_SIZE = 65536 // x.itemsize
    BLOCK_SIZE = min(MAX_FUSED_SIZE, triton.next_power_of_2(N))
    if N > BLOCK_SIZE:
        raise RuntimeError("This layer norm doesn't support feature dim >= 64KB.")
    num_warps = min(max(BLOCK_SIZE // 256, 1), 8)
    _layer_norm_fwd_fused[(M,)](x_arg, y, weight, bias, mean, rstd, x_arg.strides[0] // x_arg.itemsize, N, eps,
                                BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)
    return y, (x, weight, bias, mean, rstd, BLOCK_SIZE, num_warps, eps)


def backward(saved, dy):
    """LayerNorm.backward: the same heuristics and launches."""
    x, w, b, m, v, BLOCK_SIZE, num_warps, eps = saved
    N = w.shape[0]
    GROUP_SIZE_M = 64
    if N <= 8192: GROUP_SIZE_M = 96
    if N <= 4096: GROUP_SIZE_M = 128
    if N <= 1024: GROUP_SIZE_M = 256
    locks = np.zeros(2 * GROUP_SIZE_M, dtype=np.int32)
    _dw = np.empty((GROUP_SIZE_M, w.shape[0]), dtype=x.dtype)
    _db = np.empty((GROUP_SIZE_M, w.shape[0]), dtype=x.dtype)
    dw = np.empty((w.shape[0],), dtype=w.dtype)
    db = np.empty((w.shape[0],), dtype=w.dtype)
    dx = np.empty_like(dy)
    x_arg = x.reshape(-1, x.shape[-1])
    M, N = x_arg.shape
    _layer_norm_bwd_dx_fused[(M,)](dx, dy, _dw, _db, x, w, b, m, v, locks, x_arg.strides[0] // x_arg.itemsize, N, eps,
                                   BLOCK_SIZE_N=BLOCK_SIZE, GROUP_SIZE_M=GROUP_SIZE_M, num_warps=num_warps)
    grid = lambda meta: [triton.cdiv(N, meta['BLOCK_SIZE_N'])]
    _layer_norm_bwd_dwdb[grid](_dw, _db, dw, db, GROUP_SIZE_M, N, BLOCK_SIZE_M=32, BLOCK_SIZE_N=128)
    return dx, dw, db


def reference(x, w, b, dy, eps):
    """torch.nn.functional.layer_norm and its gradients, in float32."""
    x, w, b, dy = (t.astype(np.float32) for t in (x, w, b, dy))
    mean = x.mean(1, keepdims=True)
    rstd = 1 / np.sqrt(((x - mean) ** 2).mean(1, keepdims=True) + eps)
    xhat = (x - mean) * rstd
    y = xhat * w + b
    wdy = w * dy
    dx = (wdy - (xhat * (xhat * wdy).mean(1, keepdims=True) + wdy.mean(1, keepdims=True))) * rstd
    return y, dx, (dy * xhat).sum(0), dy.sum(0)


@pytest.mark.parametrize("M, N, dtype", [(1151, 8192, np.float16), (1151, 1000, np.float16)])
def test_layer_norm(M, N, dtype, eps=1e-5):
    rng = np.random.default_rng(M + N)
    x_shape = (M, N)
    w_shape = (x_shape[-1], )
    weight = rng.random(w_shape).astype(dtype)
    bias = rng.random(w_shape).astype(dtype)
    x = (-2.3 + 0.5 * rng.standard_normal(x_shape)).astype(dtype)
    dy = (.1 * rng.standard_normal(x_shape)).astype(dtype)
    y_tri, saved = forward(x, weight, bias, eps)
    dx_tri, dw_tri, db_tri = backward(saved, dy)
    y_ref, dx_ref, dw_ref, db_ref = reference(x, weight, bias, dy, eps)
    # triton.testing.assert_almost_equal: |a - b| < 1.5 * 10**-decimal (decimal=2 unless given)
    np.testing.assert_array_almost_equal(y_tri.astype(np.float32), y_ref.astype(dtype).astype(np.float32), decimal=2)
    np.testing.assert_array_almost_equal(dx_tri.astype(np.float32), dx_ref.astype(dtype).astype(np.float32), decimal=2)
    np.testing.assert_array_almost_equal(db_tri.astype(np.float32), db_ref.astype(dtype).astype(np.float32), decimal=1)
    np.testing.assert_array_almost_equal(dw_tri.astype(np.float32), dw_ref.astype(dtype).astype(np.float32), decimal=1)
