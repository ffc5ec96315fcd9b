"""2-D convolution (NHWC input, HWIO filter) as an implicit GEMM.

The GEMM view: M = batch·OH·OW output pixels, N = output channels F, K = KH·KW·C.  Tiles of
the "im2col" matrix are gathered on the fly from the input with masks for padding, so the
kernel uses the matmul's knobs (BLOCK_M/N/K, GROUP_M, SPLIT_K, warps, stages) and its
split-K reduction and epilogue.
"""
from __future__ import annotations

import numpy as np

import minitriton as mt
import minitriton.language as tl
from autotune.space import library_config
from autotune.sketch import gemm_rules
from .gemm import SPACE, DEFAULT, REDUCE_BLOCK, ACTIVATIONS, epilogue, grouped_tile, splitk_reduce_kernel, element_strides
from autotune.families.conv import output_shape, pair, launch_profile  # noqa: F401


@mt.jit
def conv2d_kernel(x_ptr, w_ptr, y_ptr, bias_ptr, H, W, C, F, OH, OW, KW, M, K,
                  conv_stride_h, conv_stride_w, pad_h, pad_w,
                  stride_xn, stride_xh, stride_xw, stride_xc, stride_wk, stride_wf, stride_ys, stride_ym, stride_yf,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr, SPLIT_K: tl.constexpr,
                  HAS_BIAS: tl.constexpr, ACTIVATION: tl.constexpr):
    pid_m, pid_n = grouped_tile(tl.program_id(0), tl.cdiv(M, BLOCK_M), tl.cdiv(F, BLOCK_N), GROUP_M)
    pid_k = tl.program_id(1)

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    m_ok = offs_m < M
    n_ok = offs_n < F
    img = offs_m // (OH * OW)
    pix = offs_m % (OH * OW)
    ih0 = (pix // OW) * conv_stride_h - pad_h
    iw0 = (pix % OW) * conv_stride_w - pad_w

    k_per_split = tl.cdiv(K, SPLIT_K * BLOCK_K) * BLOCK_K
    k_start = pid_k * k_per_split
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, k_per_split, BLOCK_K):
        offs_k = k_start + k + tl.arange(0, BLOCK_K)
        k_ok = offs_k < K
        kh = offs_k // (KW * C)
        kw = (offs_k // C) % KW
        ch = offs_k % C
        ih = ih0[:, None] + kh[None, :]
        iw = iw0[:, None] + kw[None, :]
        a_mask = m_ok[:, None] & k_ok[None, :] & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
        a = tl.load(x_ptr + img[:, None] * stride_xn + ih * stride_xh + iw * stride_xw + ch[None, :] * stride_xc,
                    mask=a_mask, other=0.0)
        b = tl.load(w_ptr + offs_k[:, None] * stride_wk + offs_n[None, :] * stride_wf,
                    mask=k_ok[:, None] & n_ok[None, :], other=0.0)
        acc = tl.dot(a, b, acc)

    y_mask = m_ok[:, None] & n_ok[None, :]
    if SPLIT_K == 1:
        acc = epilogue(acc, bias_ptr, offs_n, F, HAS_BIAS, ACTIVATION)
        out = acc.to(y_ptr.dtype.element_ty)
    else:
        out = acc
    tl.store(y_ptr + pid_k * stride_ys + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yf, out, mask=y_mask)


def conv2d(x, w, bias=None, stride=1, padding=0, activation=None, config=None):
    """y = activation(conv(x, w) + bias): x is (N, H, W, C), w is (KH, KW, C, F), y is (N, OH, OW, F)."""
    for name, t in (("x", x), ("w", w)):
        if not isinstance(t, np.ndarray) or t.ndim != 4:
            raise ValueError(f"conv2d: '{name}' must be a 4-D numpy array, got {getattr(t, 'shape', type(t).__name__)}")
    if x.shape[3] != w.shape[2]:
        raise ValueError(f"conv2d: input has {x.shape[3]} channels but the filter expects {w.shape[2]}")
    if x.dtype != w.dtype:
        raise TypeError(f"conv2d: 'x' and 'w' must share a dtype, got {x.dtype} and {w.dtype}")
    if activation not in ACTIVATIONS:
        raise ValueError(f"conv2d: 'activation' must be one of {ACTIVATIONS}, got {activation!r}")
    (sh, sw), (ph, pw) = pair(stride, "stride"), pair(padding, "padding")
    if sh < 1 or sw < 1 or ph < 0 or pw < 0:
        raise ValueError(f"conv2d: stride must be >= 1 and padding >= 0, got stride={stride}, padding={padding}")
    n, oh, ow, f = output_shape(x.shape, w.shape, (sh, sw), (ph, pw))
    if oh < 1 or ow < 1:
        raise ValueError(f"conv2d: the filter {w.shape[:2]} does not fit the padded input {x.shape[1:3]}")
    kh, kw, c, _ = w.shape
    M, K = n * oh * ow, kh * kw * c
    w2 = np.ascontiguousarray(w).reshape(K, f)
    cfg = library_config(config, DEFAULT, "conv2d")
    kwargs = {**DEFAULT.kwargs, **cfg.kwargs}
    bm, bn, sk = kwargs["BLOCK_M"], kwargs["BLOCK_N"], kwargs["SPLIT_K"]
    y = np.empty((n, oh, ow, f), x.dtype)
    y2 = y.reshape(M, f)
    grid = (mt.cdiv(M, bm) * mt.cdiv(f, bn), sk)
    common = (x.shape[1], x.shape[2], c, f, oh, ow, kw, M, K, sh, sw, ph, pw, *element_strides(x), *element_strides(w2))
    meta = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=kwargs["BLOCK_K"], GROUP_M=kwargs["GROUP_M"], SPLIT_K=sk,
                num_warps=cfg.num_warps, num_stages=cfg.num_stages)
    if sk == 1:
        conv2d_kernel[grid](x, w2, y2, bias, *common, 0, *element_strides(y2), HAS_BIAS=bias is not None,
                            ACTIVATION=activation, **meta)
    else:
        ws = np.empty((sk, M, f), np.float32)
        conv2d_kernel[grid](x, w2, ws, None, *common, *element_strides(ws), HAS_BIAS=False, ACTIVATION=None, **meta)
        splitk_reduce_kernel[(mt.cdiv(M, REDUCE_BLOCK), mt.cdiv(f, REDUCE_BLOCK))](
            ws, y2, bias, M, f, *element_strides(ws), *element_strides(y2), SPLIT_K=sk, BLOCK_M=REDUCE_BLOCK,
            BLOCK_N=REDUCE_BLOCK, HAS_BIAS=bias is not None, ACTIVATION=activation)
    return y


def reference(x, w, bias=None, stride=1, padding=0, activation=None):
    (sh, sw), (ph, pw) = pair(stride, "stride"), pair(padding, "padding")
    n, oh, ow, f = output_shape(x.shape, w.shape, (sh, sw), (ph, pw))
    xp = np.pad(x.astype(np.float64), ((0, 0), (ph, ph), (pw, pw), (0, 0)))
    y = np.zeros((n, oh, ow, f))
    for i in range(w.shape[0]):
        for j in range(w.shape[1]):
            patch = xp[:, i:i + sh * (oh - 1) + 1:sh, j:j + sw * (ow - 1) + 1:sw, :]
            y += patch @ w[i, j].astype(np.float64)
    if bias is not None:
        y += bias.astype(np.float64)
    return np.maximum(y, 0) if activation == "relu" else y


conv2d.space = SPACE
conv2d.launch_profile = launch_profile
conv2d.shape_keys = ("N", "H", "W", "C", "F", "KH", "KW")


def sketch_rules(shape, space):
    """The implicit GEMM's sketch rules (M = N·OH·OW, N = F, K = KH·KW·C)."""
    n, h, w, c, f, kh, kw = (int(shape[k]) for k in ("N", "H", "W", "C", "F", "KH", "KW"))
    (sh, sw), (ph, pw) = pair(shape.get("stride", 1), "stride"), pair(shape.get("padding", 0), "padding")
    _, oh, ow, _ = output_shape((n, h, w, c), (kh, kw, c, f), (sh, sw), (ph, pw))
    return gemm_rules(n * oh * ow, f, kh * kw * c, space, what="the implicit GEMM")


conv2d.sketch_rules = sketch_rules
