"""The GEMM family: the space and default config of the library matmul (and the implicit-GEMM
conv2d, and the matmuls `te` generates), its GROUP_M tile order, and the launch profile HypoGPU
times all of them by.

It sits below both users: `kernels/gemm.py` writes the kernels with it and `autotune/codegen`
generates operators of the same structure that state the same profile (equal to what the
executor counts, tested)."""
from __future__ import annotations

import numpy as np

import minitriton as mt
import minitriton.language as tl
from minitriton.hypogpu.profile import Profile, meta_key, register_estimate
from ..space import Config, Space

SPACE = Space(BLOCK_M=[16, 32, 64, 128, 256], BLOCK_N=[16, 32, 64, 128, 256], BLOCK_K=[16, 32, 64, 128, 256],
              num_warps=[1, 2, 4, 8, 16], num_stages=[1, 2, 3, 4, 5, 6, 7], GROUP_M=[1, 2, 4, 8, 16, 32],
              SPLIT_K=[1, 2, 4, 8, 16, 32])
DEFAULT = Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8, "SPLIT_K": 1}, num_warps=4, num_stages=3)
REDUCE_BLOCK = 64   # the split-K reduction's and the unfused epilogue's tile side


@mt.jit
def grouped_tile(pid, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    """Program id -> (tile row, tile column), GROUP_M tile rows at a time, so that programs
    running together share A row-blocks (the L2 reuse of Triton's tutorial)."""
    num_pid_in_group = GROUP_M * num_pid_n
    first_pid_m = (pid // num_pid_in_group) * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    return pid_m, pid_n



def _cdiv(a, b):
    return -(-np.asarray(a) // np.asarray(b))


def _grouped_unique(P, npm, npn, group):
    """Distinct tile rows and columns among P consecutive programs of the GROUP_M order."""
    g = np.minimum(group, npm)
    band = g * npn
    rows = np.where(P <= band, np.minimum(g, P), np.minimum(npm, g * _cdiv(P, band)))
    cols = np.where(P <= band, np.minimum(npn, _cdiv(P, g)), npn)
    return rows, cols


def tiled_grid(M, N, K, cfg):
    """The knobs (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, SPLIT_K, num_warps, num_stages) as arrays,
    and the tile rows, tile columns, programs and K trips of a split-K GEMM over M x N x K."""
    knobs = [np.asarray(cfg[k]) for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "SPLIT_K", "num_warps",
                                          "num_stages")]
    BM, BN, BK, _, SK, _, _ = knobs
    npm, npn = _cdiv(M, BM), _cdiv(N, BN)
    return knobs, npm, npn, npm * npn * SK, _cdiv(K, SK * BK)


def grouped_dram(npm, npn, G, SK, a_tile_bytes, b_tile_bytes, all_loads):
    """DRAM bytes of a GROUP_M-ordered tiled launch, as a function of resident programs (slots):
    each wave of `slots` programs reads its distinct A row-tiles and B column-tiles once; the
    tiles of one split run in ceil(tiles / slots) waves (or share a wave with other splits)."""
    tiles = npm * npn

    def unique(P):
        rows, cols = _grouped_unique(P, npm, npn, G)
        return np.where(P > 0, rows * a_tile_bytes + cols * b_tile_bytes, 0.0)

    def dram(slots):
        wave = np.minimum(slots, tiles)
        per_split = np.floor(tiles / wave) * unique(wave) + unique(tiles - np.floor(tiles / wave) * wave)
        return np.minimum(SK * per_split, all_loads)
    return dram


def reduce_profile(M, N, SK, itemsize, bias, activation, enabled, epilogue=None, name="splitk_reduce_kernel"):
    """The split-K reduction: SPLIT_K fp32 partial tiles summed per 64x64 output block (and the
    epilogue: `epilogue` = (element-wise ops, bytes per N of vectors along N, along M, and per
    element of M x N tiles) when it is not the library's bias/ReLU)."""
    tiles = _cdiv(M, REDUCE_BLOCK) * _cdiv(N, REDUCE_BLOCK)
    block = REDUCE_BLOCK * REDUCE_BLOCK
    ops, per_n, per_m, per_mn = epilogue if epilogue is not None else \
        (bool(bias) + (activation == "relu"), itemsize if bias else 0, 0, 0)
    meta = dict(SPLIT_K=SK, BLOCK_M=REDUCE_BLOCK, BLOCK_N=REDUCE_BLOCK, HAS_BIAS=bias, num_warps=4, num_stages=3)
    side = (per_n * N * _cdiv(M, REDUCE_BLOCK) + per_m * M * _cdiv(N, REDUCE_BLOCK) + per_mn * M * N) / tiles
    return Profile(name, grid=tiles, num_warps=4, num_stages=3, k_steps=SK,
                   load_bytes_step=M * N * 4.0 / tiles + side / SK,
                   alu_flops=block * (SK + ops),
                   store_bytes=M * N * itemsize / tiles, regs=register_estimate(0, 0, 4, block),
                   key=meta_key(name, meta), enabled=enabled)


def bias_act_profile(M, N, itemsize, bias, activation):
    """The unfused epilogue: one more pass over C."""
    tiles = _cdiv(M, REDUCE_BLOCK) * _cdiv(N, REDUCE_BLOCK)
    block = REDUCE_BLOCK * REDUCE_BLOCK
    meta = dict(BLOCK_M=REDUCE_BLOCK, BLOCK_N=REDUCE_BLOCK, HAS_BIAS=bias, num_warps=4, num_stages=3)
    loads = M * N * itemsize + (N * itemsize * _cdiv(M, REDUCE_BLOCK) if bias else 0)
    return Profile("bias_act_kernel", grid=tiles, num_warps=4, num_stages=3, k_steps=1,
                   load_bytes_step=loads / tiles, alu_flops=block * (bool(bias) + (activation == "relu")),
                   store_bytes=M * N * itemsize / tiles, regs=register_estimate(0, 0, 4, block),
                   key=meta_key("bias_act_kernel", meta), enabled=True)


def launch_profile(shape, cfg, itemsize=2, bias=False, activation=None, fuse_epilogue=True, epilogue=None,
                   names=("matmul_kernel", "splitk_reduce_kernel"), batch=1):
    """The launches `matmul` makes for shape {M, N, K} and config knobs (scalars or arrays).
    `epilogue` = (element-wise ops per output element, bytes per N of vectors it loads along N,
    along M, bytes per element of M x N tiles) describes a generated epilogue (autotune/codegen/)
    instead of bias/ReLU; `names` are the kernels' names; `batch` independent products run as
    one launch (a batched matmul: every count per program is unchanged, the grid and DRAM grow)."""
    M, N, K = (int(shape[k]) for k in ("M", "N", "K"))
    (BM, BN, BK, G, SK, W, S), npm, npn, grid, steps = tiled_grid(M, N, K, cfg)
    tiles = npm * npn
    k_per_program = K / SK                           # masked K beyond the end loads nothing
    fused_bias = bool(bias) and fuse_epilogue
    fused_act = activation if fuse_epilogue else None
    ops, per_n, per_m, per_mn = epilogue if epilogue is not None else \
        (fused_bias + (fused_act == "relu"), itemsize if fused_bias else 0, 0, 0)
    single = SK == 1
    side = per_n * N / npn + per_m * M / npm + per_mn * M * N / tiles
    loaded = (BM + BN) * k_per_program * itemsize + np.where(single, side, 0)
    stores = np.where(single, M * N * itemsize / tiles, M * N * 4.0 * SK / grid)
    alu = np.where(single, BM * BN * ops, 0)
    meta = dict(BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=G, SPLIT_K=SK, HAS_BIAS=np.asarray(fused_bias),
                num_warps=W, num_stages=S)

    dram = grouped_dram(npm, npn, G, SK, BM * k_per_program * itemsize, BN * k_per_program * itemsize,
                        grid * loaded)
    extra = [reduce_profile(M, N, SK, itemsize, fused_bias, fused_act, SK > 1, epilogue, names[1])]
    if not fuse_epilogue and (bias or activation):
        extra.append(bias_act_profile(M, N, itemsize, bool(bias), activation))
    if batch != 1:
        one = dram
        dram = lambda slots: batch * one(slots)  # noqa: E731 - the batches share no operand
        for e in extra:
            e.grid = e.grid * batch
        grid = grid * batch
    return Profile(names[0], grid=grid, num_warps=W, num_stages=S, k_steps=steps,
                   tc_flops_step=2.0 * BM * BN * BK, load_bytes_step=loaded / steps, tile=(BM, BN, BK),
                   smem_stage=(BM * BK + BK * BN) * itemsize, regs=register_estimate(BM, BN, W), alu_flops=alu,
                   store_bytes=stores, dram_bytes=dram, key=meta_key(names[0], meta), extra=extra)
