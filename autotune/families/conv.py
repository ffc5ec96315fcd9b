"""The conv2d family: NHWC convolution as an implicit GEMM (M = N·OH·OW, N = F, K = KH·KW·C),
with the GEMM's space; its output shape and its launch profile (A tiles gathered, padding not
loaded), shared with the convolutions `te` generates."""
from __future__ import annotations

import numpy as np

from minitriton.hypogpu.profile import Profile, meta_key, register_estimate
from .gemm import grouped_dram, tiled_grid, reduce_profile

def pair(v, name):
    if isinstance(v, (int, np.integer)):
        v = (int(v), int(v))
    if not (isinstance(v, (tuple, list)) and len(v) == 2 and all(isinstance(i, (int, np.integer)) for i in v)):
        raise ValueError(f"conv2d: '{name}' must be an int or a pair of ints, got {v!r}")
    return int(v[0]), int(v[1])


def output_shape(x_shape, w_shape, stride=1, padding=0):
    n, h, w, _ = x_shape
    kh, kw, _, f = w_shape
    (sh, sw), (ph, pw) = pair(stride, "stride"), pair(padding, "padding")
    return n, (h + 2 * ph - kh) // sh + 1, (w + 2 * pw - kw) // sw + 1, f


def _valid(out, size, k, stride, pad):
    """For each filter offset 0..k-1: how many of `out` output positions read inside the input."""
    o = np.arange(out)[:, None] * stride - pad + np.arange(k)[None, :]
    return ((o >= 0) & (o < size)).sum(0)


def launch_profile(shape, cfg, itemsize=2, bias=False, activation=None, epilogue=None,
                   names=("conv2d_kernel", "splitk_reduce_kernel")):
    """The launches `conv2d` makes for shape {N, H, W, C, F, KH, KW, stride, padding}: an implicit
    GEMM (M = N·OH·OW, N = F, K = KH·KW·C) whose A tiles are gathered; padding is not loaded.
    `epilogue` and `names` as in gemm.launch_profile (for a generated convolution)."""
    n, h, w, c, f, kh, kw = (int(shape[k]) for k in ("N", "H", "W", "C", "F", "KH", "KW"))
    (sh, sw), (ph, pw) = pair(shape.get("stride", 1), "stride"), pair(shape.get("padding", 0), "padding")
    _, oh, ow, _ = output_shape((n, h, w, c), (kh, kw, c, f), (sh, sw), (ph, pw))
    M, K = n * oh * ow, kh * kw * c
    (BM, BN, BK, G, SK, W, S), npm, npn, grid, steps = tiled_grid(M, f, K, cfg)
    tiles = npm * npn
    a_elems = n * c * _valid(oh, h, kh, sh, ph).sum() * _valid(ow, w, kw, sw, pw).sum()  # in-bounds input reads
    a_total = npn * a_elems * itemsize                      # every column of tiles gathers its rows again
    b_total = npm * K * f * itemsize                        # every row of tiles reads the whole filter
    single = SK == 1
    ops, per_n, per_m, per_mn = epilogue if epilogue is not None else \
        (bool(bias) + (activation == "relu"), itemsize if bias else 0, 0, 0)
    side = per_n * f / npn + per_m * M / npm + per_mn * M * f / tiles
    loaded = (a_total + b_total) / grid + np.where(single, side, 0)
    stores = np.where(single, M * f * itemsize / tiles, M * f * 4.0 * SK / grid)
    meta = dict(BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=G, SPLIT_K=SK, HAS_BIAS=np.asarray(bool(bias)),
                num_warps=W, num_stages=S)
    dram = grouped_dram(npm, npn, G, SK, a_total / npn / npm / SK, b_total / npm / npn / SK, grid * loaded)
    return Profile(names[0], grid=grid, num_warps=W, num_stages=S, k_steps=steps,
                   tc_flops_step=2.0 * BM * BN * BK, load_bytes_step=loaded / steps, tile=(BM, BN, BK),
                   smem_stage=(BM * BK + BK * BN) * itemsize, regs=register_estimate(BM, BN, W),
                   alu_flops=np.where(single, BM * BN * ops, 0), store_bytes=stores,
                   dram_bytes=dram, key=meta_key(names[0], meta),
                   extra=[reduce_profile(M, f, SK, itemsize, bool(bias), activation, SK > 1, epilogue, names[1])])
