"""Matrix multiplication in the structure of Triton's tutorial.

GROUP_M swizzles program ids so that consecutive programs share A row-blocks in L2; masks
handle ragged shapes; accumulation is fp32 and the output takes the inputs' dtype.
SPLIT_K > 1 is the rfactor form: each of SPLIT_K program slices reduces one K range into an
fp32 workspace, and a second kernel sums the slices (and applies the epilogue).  Transposed
operands need no copy: pass the transposed view, its strides go to the kernel.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

import minitriton as mt
import minitriton.language as tl
from autotune.space import library_config
from autotune.sketch import gemm_rules
from autotune.families.gemm import (SPACE, DEFAULT, REDUCE_BLOCK, grouped_tile, launch_profile,  # noqa: F401
                                   tiled_grid, grouped_dram)

ACTIVATIONS = (None, "relu")


@mt.jit
def epilogue(acc, bias_ptr, offs_n, N, HAS_BIAS: tl.constexpr, ACTIVATION: tl.constexpr):
    if HAS_BIAS:
        bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0)
        acc = acc + bias.to(tl.float32)[None, :]
    if ACTIVATION == "relu":
        acc = tl.maximum(acc, 0.0)
    return acc


@mt.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, bias_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cs, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr, SPLIT_K: tl.constexpr,
                  HAS_BIAS: tl.constexpr, ACTIVATION: tl.constexpr):
    pid_m, pid_n = grouped_tile(tl.program_id(0), tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N), GROUP_M)
    pid_k = tl.program_id(1)

    k_per_split = tl.cdiv(K, SPLIT_K * BLOCK_K) * BLOCK_K
    k_start = pid_k * k_per_split
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + (k_start + offs_k[None, :]) * stride_ak)
    b_ptrs = b_ptr + ((k_start + offs_k[:, None]) * stride_bk + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, k_per_split, BLOCK_K):
        k_left = K - k_start - k
        a = tl.load(a_ptrs, mask=offs_k[None, :] < k_left, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < k_left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    if SPLIT_K == 1:
        acc = epilogue(acc, bias_ptr, offs_cn, N, HAS_BIAS, ACTIVATION)
        c = acc.to(c_ptr.dtype.element_ty)
    else:
        c = acc  # fp32 partial sums into the workspace
    c_ptrs = c_ptr + pid_k * stride_cs + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, c, mask=c_mask)


@mt.jit
def splitk_reduce_kernel(ws_ptr, c_ptr, bias_ptr, M, N, stride_ws, stride_wm, stride_wn, stride_cm, stride_cn,
                         SPLIT_K: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                         HAS_BIAS: tl.constexpr, ACTIVATION: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    ws_ptrs = ws_ptr + offs_m[:, None] * stride_wm + offs_n[None, :] * stride_wn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for s in tl.static_range(SPLIT_K):
        acc += tl.load(ws_ptrs + s * stride_ws, mask=mask, other=0.0)
    acc = epilogue(acc, bias_ptr, offs_n, N, HAS_BIAS, ACTIVATION)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn, acc.to(c_ptr.dtype.element_ty),
             mask=mask)


@mt.jit
def bias_act_kernel(c_ptr, bias_ptr, M, N, stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                    HAS_BIAS: tl.constexpr, ACTIVATION: tl.constexpr):
    """The unfused epilogue: one more pass over C."""
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    acc = tl.load(ptrs, mask=mask, other=0.0).to(tl.float32)
    acc = epilogue(acc, bias_ptr, offs_n, N, HAS_BIAS, ACTIVATION)
    tl.store(ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask)


_FLOATS = (np.float16, np.float32)


def _check_operands(a, b, bias, activation):
    for name, x in (("a", a), ("b", b)):
        if not isinstance(x, np.ndarray) or x.ndim != 2:
            raise ValueError(f"matmul: '{name}' must be a 2-D numpy array, got {getattr(x, 'shape', type(x).__name__)}")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"matmul: inner dimensions differ: a is {a.shape}, b is {b.shape}")
    if a.dtype != b.dtype or a.dtype not in (np.float16, np.float32, ml_dtypes.bfloat16):
        raise TypeError(f"matmul: 'a' and 'b' must share a dtype among float16, bfloat16, float32; got {a.dtype} and {b.dtype}")
    if bias is not None and (not isinstance(bias, np.ndarray) or bias.shape != (b.shape[1],)):
        raise ValueError(f"matmul: 'bias' must be an array of shape ({b.shape[1]},), got {getattr(bias, 'shape', bias)}")
    if activation not in ACTIVATIONS:
        raise ValueError(f"matmul: 'activation' must be one of {ACTIVATIONS}, got {activation!r}")


def matmul(a, b, bias=None, activation=None, config=None, out=None, fuse_epilogue=True):
    """C = activation(a @ b + bias) with one config; returns C in a's dtype."""
    _check_operands(a, b, bias, activation)
    cfg = library_config(config, DEFAULT, "matmul")
    kw = {**DEFAULT.kwargs, **cfg.kwargs}
    M, K = a.shape
    N = b.shape[1]
    c = np.empty((M, N), a.dtype) if out is None else out
    bm, bn, sk = kw["BLOCK_M"], kw["BLOCK_N"], kw["SPLIT_K"]
    has_bias, act = bias is not None, activation
    fused_bias, fused_act = (has_bias, act) if fuse_epilogue else (False, None)
    grid = (mt.cdiv(M, bm) * mt.cdiv(N, bn), sk)
    meta = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=kw["BLOCK_K"], GROUP_M=kw["GROUP_M"], SPLIT_K=sk,
                num_warps=cfg.num_warps, num_stages=cfg.num_stages)
    if sk == 1:
        matmul_kernel[grid](a, b, c, bias, M, N, K, *element_strides(a), *element_strides(b),
                            0, *element_strides(c), HAS_BIAS=fused_bias, ACTIVATION=fused_act, **meta)
    else:
        ws = np.empty((sk, M, N), np.float32)
        matmul_kernel[grid](a, b, ws, None, M, N, K, *element_strides(a), *element_strides(b), *element_strides(ws),
                            HAS_BIAS=False, ACTIVATION=None, **meta)
        rgrid = (mt.cdiv(M, REDUCE_BLOCK), mt.cdiv(N, REDUCE_BLOCK))
        splitk_reduce_kernel[rgrid](ws, c, bias, M, N, *element_strides(ws), *element_strides(c), SPLIT_K=sk,
                                    BLOCK_M=REDUCE_BLOCK, BLOCK_N=REDUCE_BLOCK, HAS_BIAS=fused_bias,
                                    ACTIVATION=fused_act)
    if not fuse_epilogue and (has_bias or act):
        bias_act_kernel[(mt.cdiv(M, REDUCE_BLOCK), mt.cdiv(N, REDUCE_BLOCK))](
            c, bias, M, N, *element_strides(c), BLOCK_M=REDUCE_BLOCK, BLOCK_N=REDUCE_BLOCK, HAS_BIAS=has_bias,
            ACTIVATION=act)
    return c


def element_strides(x):
    return tuple(s // x.itemsize for s in x.strides)


def reference(a, b, bias=None, activation=None):
    """float64 reference."""
    c = a.astype(np.float64) @ b.astype(np.float64)
    if bias is not None:
        c = c + bias.astype(np.float64)
    if activation == "relu":
        c = np.maximum(c, 0)
    return c


def sketch_rules(shape, space, epilogue=None):
    """Ansor's sketch rules for this GEMM at `shape` (autotune/sketch.py)."""
    return gemm_rules(int(shape["M"]), int(shape["N"]), int(shape["K"]), space, epilogue=epilogue)


def matmul_relu(a, b, config=None, bias=None):
    """relu(a @ b + bias): the matmul with its ReLU fused into the write-back."""
    return matmul(a, b, bias, "relu", config)


matmul.space = matmul_relu.space = SPACE
matmul.launch_profile = launch_profile
matmul_relu.launch_profile = lambda shape, cfg: launch_profile(shape, cfg, activation="relu")
matmul.shape_keys = matmul_relu.shape_keys = ("M", "N", "K")
# FLOPs and compulsory fp16 traffic (A and B read once, C written once): the task scheduler's size and intensity
matmul.work = matmul_relu.work = lambda s: (2.0 * s["M"] * s["N"] * s["K"],
                                            2.0 * (s["M"] * s["K"] + s["K"] * s["N"] + s["M"] * s["N"]))
matmul.sketch_rules = sketch_rules
matmul_relu.sketch_rules = lambda shape, space: sketch_rules(shape, space, epilogue="ReLU")
