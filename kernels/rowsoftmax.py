"""Row-wise softmax (Triton's fused-softmax tutorial), ROWS rows per program."""
from __future__ import annotations

import numpy as np

import minitriton as mt
import minitriton.language as tl
from autotune.space import library_config, Config, Space, as_config

SPACE = Space(ROWS=[1, 2, 4, 8, 16], num_warps=[1, 2, 4, 8, 16, 32], num_stages=[1, 2, 3, 4])
DEFAULT = Config({"ROWS": 1}, num_warps=4, num_stages=2)


@mt.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_rows, n_cols,
                   BLOCK_SIZE: tl.constexpr, ROWS: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.load(in_ptr + rows[:, None] * in_stride + cols[None, :], mask=mask, other=-float("inf"))
    x = x.to(tl.float32)
    z = x - tl.max(x, axis=1)[:, None]
    num = tl.exp(z)
    den = tl.sum(num, axis=1)[:, None]
    tl.store(out_ptr + rows[:, None] * out_stride + cols[None, :], num / den, mask=mask)


def softmax(x, config=None):
    """Softmax of each row of a 2-D array (rows contiguous), output in x's dtype."""
    if not isinstance(x, np.ndarray) or x.ndim != 2 or x.strides[1] != x.itemsize:
        raise ValueError("softmax: 'x' must be a 2-D numpy array with contiguous rows")
    cfg = library_config(config, DEFAULT, "softmax")
    rows = {**DEFAULT.kwargs, **cfg.kwargs}["ROWS"]
    M, N = x.shape
    out = np.empty_like(x)
    softmax_kernel[(mt.cdiv(M, rows),)](out, x, x.strides[0] // x.itemsize, out.strides[0] // out.itemsize, M, N,
                                        BLOCK_SIZE=mt.next_power_of_2(N), ROWS=rows,
                                        num_warps=cfg.num_warps, num_stages=cfg.num_stages)
    return out


def reference(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def launch_profile(shape, cfg, itemsize=2, ops=5, names=("softmax_kernel",), out_itemsize=None, row_ops=0):
    """The launch `softmax` makes for shape {M, N} and config knobs: five elementwise passes over
    each (ROWS x BLOCK) block (max, subtract, exp, sum, divide), one read and one write of x.
    `ops` (element-wise passes over the block), `row_ops` (operations on one value per row),
    `names`, `out_itemsize`: for a generated row-wise kernel (autotune/codegen.py)."""
    from minitriton.hypogpu.profile import Profile, meta_key, register_estimate
    M, N = int(shape["M"]), int(shape["N"])
    R, W, S = (np.asarray(cfg[k]) for k in ("ROWS", "num_warps", "num_stages"))
    block = R * mt.next_power_of_2(N)
    grid = -(-M // R)
    out_itemsize = itemsize if out_itemsize is None else out_itemsize
    return Profile(names[0], grid=grid, num_warps=W, num_stages=S, k_steps=1,
                   load_bytes_step=M * N * itemsize / grid, alu_flops=ops * block + row_ops * R, store_bytes=M * N * out_itemsize / grid,
                   regs=register_estimate(0, 0, W, block),
                   key=meta_key(names[0], dict(BLOCK_SIZE=mt.next_power_of_2(N), ROWS=R, num_warps=W,
                                                       num_stages=S)))


softmax.space = SPACE
softmax.launch_profile = launch_profile
softmax.shape_keys = ("M", "N")
