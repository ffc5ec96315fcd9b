"""Row sums of a long-row matrix, with an rfactor split of the row.

With SPLIT = 1 each program sums one row.  With SPLIT > 1 (the rfactor form, lecture §5.3)
program (row, s) sums one slice of the row into an fp32 workspace and a second kernel adds
the SPLIT partial sums: more programs for few, long rows.
"""
from __future__ import annotations

import numpy as np

import minitriton as mt
import minitriton.language as tl
from autotune.space import library_config
from autotune.families.rowsum import SPACE, DEFAULT, launch_profile  # noqa: F401
from autotune.sketch import reduction_rules

@mt.jit
def rowsum_kernel(x_ptr, out_ptr, N, stride_xm, stride_xn, stride_om, stride_os,
                  BLOCK_N: tl.constexpr, SPLIT: tl.constexpr):
    row = tl.program_id(0)
    split = tl.program_id(1)
    n_per_split = tl.cdiv(N, SPLIT * BLOCK_N) * BLOCK_N
    start = split * n_per_split
    cols = tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for n in range(0, n_per_split, BLOCK_N):
        offs = start + n + cols
        x = tl.load(x_ptr + row * stride_xm + offs * stride_xn, mask=offs < N, other=0.0)
        acc += x.to(tl.float32)
    tl.store(out_ptr + row * stride_om + split * stride_os, tl.sum(acc, axis=0))


@mt.jit
def partial_sum_kernel(ws_ptr, out_ptr, M, stride_wm, BLOCK_M: tl.constexpr, SPLIT: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    parts = tl.load(ws_ptr + rows[:, None] * stride_wm + tl.arange(0, SPLIT)[None, :], mask=rows[:, None] < M,
                    other=0.0)
    tl.store(out_ptr + rows, tl.sum(parts, axis=1), mask=rows < M)


def row_sum(x, config=None):
    """Sum of each row of a 2-D array, in float32."""
    if not isinstance(x, np.ndarray) or x.ndim != 2:
        raise ValueError(f"row_sum: 'x' must be a 2-D numpy array, got {getattr(x, 'shape', type(x).__name__)}")
    cfg = library_config(config, DEFAULT, "row_sum")
    kw = {**DEFAULT.kwargs, **cfg.kwargs}
    M, N = x.shape
    out = np.empty(M, np.float32)
    sx = tuple(s // x.itemsize for s in x.strides)
    split = kw["SPLIT"]
    launch = dict(BLOCK_N=kw["BLOCK_N"], SPLIT=split, num_warps=cfg.num_warps, num_stages=cfg.num_stages)
    if split == 1:
        rowsum_kernel[(M, 1)](x, out, N, *sx, 1, 0, **launch)
    else:
        ws = np.empty((M, split), np.float32)
        rowsum_kernel[(M, split)](x, ws, N, *sx, split, 1, **launch)
        partial_sum_kernel[(mt.cdiv(M, 16),)](ws, out, M, split, BLOCK_M=16, SPLIT=split)
    return out


def reference(x):
    return x.astype(np.float64).sum(axis=1)


row_sum.space = SPACE
row_sum.launch_profile = launch_profile
row_sum.shape_keys = ("M", "N")
row_sum.sketch_rules = lambda shape, space: reduction_rules(int(shape["M"]), int(shape["N"]), space, "SPLIT")
