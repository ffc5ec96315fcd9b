"""Row-wise softmax (Triton's fused-softmax tutorial), ROWS rows per program."""
from __future__ import annotations

import numpy as np

import minitriton as mt
import minitriton.language as tl
from autotune.space import library_config
from autotune.families.rowsoftmax import SPACE, DEFAULT, launch_profile  # noqa: F401

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
    if not isinstance(x, np.ndarray) or x.ndim != 2:
        raise ValueError(f"softmax: 'x' must be a 2-D numpy array, got {getattr(x, 'shape', type(x).__name__)}")
    if x.size == 0:
        return np.empty_like(x)         # no rows, or rows of nothing: nothing to compute
    if x.strides[1] != x.itemsize:
        raise ValueError(f"softmax: 'x' must have contiguous rows, got strides {x.strides} for {x.dtype} elements")
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


softmax.space = SPACE
softmax.launch_profile = launch_profile
softmax.shape_keys = ("M", "N")
