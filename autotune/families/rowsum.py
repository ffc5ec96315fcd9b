"""The row-sum family: the space and default config of the library's long-row reduction (one
program per row, or SPLIT programs per row and a second kernel: the rfactor form), and its
launch profile, shared with the reductions `te` generates."""
from __future__ import annotations

import numpy as np

from minitriton.hypogpu.profile import Profile, meta_key, register_estimate
from ..space import Config, Space

SPACE = Space(BLOCK_N=[128, 256, 512, 1024, 2048, 4096], SPLIT=[1, 2, 4, 8, 16, 32, 64],
              num_warps=[1, 2, 4, 8, 16], num_stages=[1, 2, 3, 4])
DEFAULT = Config({"BLOCK_N": 1024, "SPLIT": 1}, num_warps=4, num_stages=2)


def launch_profile(shape, cfg, itemsize=2, names=("rowsum_kernel", "partial_sum_kernel")):
    """The launches `row_sum` makes for shape {M, N} (rows, row length) and config knobs; `names`
    for a generated reduction of the same structure (autotune/codegen/)."""
    M, N = int(shape["M"]), int(shape["N"])
    BN, SPLIT, W, S = (np.asarray(cfg[k]) for k in ("BLOCK_N", "SPLIT", "num_warps", "num_stages"))
    trips = -(-N // (SPLIT * BN))
    main = Profile(names[0], grid=M * SPLIT, num_warps=W, num_stages=S, k_steps=trips,
                   load_bytes_step=N * itemsize / SPLIT / trips, alu_flops=(trips + 1) * BN, store_bytes=4,
                   regs=register_estimate(0, 0, W, BN),
                   key=meta_key(names[0], dict(BLOCK_N=BN, SPLIT=SPLIT, num_warps=W, num_stages=S)))
    rows = -(-M // 16)
    main.extra = [Profile(names[1], grid=rows, num_warps=4, num_stages=3, k_steps=1,
                          load_bytes_step=M * SPLIT * 4.0 / rows, alu_flops=16 * SPLIT, store_bytes=M * 4.0 / rows,
                          regs=register_estimate(0, 0, 4, 16 * SPLIT),
                          key=meta_key(names[1], dict(BLOCK_M=16, SPLIT=SPLIT, num_warps=4, num_stages=3)),
                          enabled=SPLIT > 1)]
    return main
