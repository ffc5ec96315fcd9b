"""The row-softmax family: the space and default config of the library softmax (ROWS rows per
program, each held whole) and its launch profile, shared with the row-wise computations `te`
generates."""
from __future__ import annotations

import numpy as np

import minitriton as mt
from minitriton.hypogpu.profile import Profile, meta_key, register_estimate
from ..space import Config, Space

SPACE = Space(ROWS=[1, 2, 4, 8, 16], num_warps=[1, 2, 4, 8, 16, 32], num_stages=[1, 2, 3, 4])
DEFAULT = Config({"ROWS": 1}, num_warps=4, num_stages=2)


def launch_profile(shape, cfg, itemsize=2, ops=5, names=("softmax_kernel",), out_itemsize=None, row_ops=0):
    """The launch `softmax` makes for shape {M, N} and config knobs: five elementwise passes over
    each (ROWS x BLOCK) block (max, subtract, exp, sum, divide), one read and one write of x.
    `ops` (element-wise passes over the block), `row_ops` (operations on one value per row),
    `names`, `out_itemsize`: for a generated row-wise kernel (autotune/codegen/)."""
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
