"""Traced launch profiles against stated ones, and a user kernel timed by tracing alone.

HypoGPU times a kernel from its launch profile: the library states one by formula, any other
kernel gets one by tracing its launch.  (1) For 200 random configs of the library matmul on
the lecture's five shapes, the time from the traced profile against the time from the stated
one.  (2) A fused softmax written by a user, with no profile at all: its time, and the share
of DRAM bandwidth that implies (it should be memory-bound, like the real one).
"""
from __future__ import annotations

import time

import numpy as np

import minitriton as mt
import minitriton.language as tl
from benchmarks import common
from benchmarks.common import markdown
from kernels import gemm
from kernels.shapes import SHAPES, LECTURE_FIVE
from minitriton.hypogpu import HypoGPU, OutOfResources, A100


@mt.jit
def user_softmax(y_ptr, x_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=cols < n_cols)


def _time(dev, profiles):
    try:
        return dev.time(profiles)
    except OutOfResources:
        return float("inf")


def compare(per_shape: int, seed: int = 0):
    dev = HypoGPU()
    rng = np.random.default_rng(seed)
    rows, worst = [], 0.0
    for name in LECTURE_FIVE:
        shape = SHAPES[name]
        a = np.zeros((shape["M"], shape["K"]), np.float16)
        b = np.zeros((shape["K"], shape["N"]), np.float16)
        diffs, refused, t0 = [], 0, time.perf_counter()
        for cfg in gemm.SPACE.sample(rng, per_shape):
            stated = _time(dev, [gemm.launch_profile(shape, cfg.all_kwargs())])
            traced = _time(dev, dev.trace(gemm.matmul, a, b, config=cfg))
            if np.isfinite(stated) or np.isfinite(traced):
                diffs.append(traced / stated - 1)
            else:
                refused += 1
        d = np.abs(diffs)
        worst = max(worst, d.max())
        rows.append((name, per_shape, refused, f"{np.median(d):.2%}", f"{d.max():.2%}",
                     f"{(time.perf_counter() - t0) / per_shape:.2f}"))
    return markdown(["shape", "configs", "refused by both", "median |traced/stated − 1|", "max", "s per trace"],
                    rows), worst


def user_kernel():
    dev = HypoGPU()
    rows = []
    for m, n in ((4096, 4096), (16384, 1024), (1024, 32768)):
        x = np.zeros((m, n), np.float16)
        y = np.empty_like(x)
        block = mt.next_power_of_2(n)
        for warps in (4, 8, 16):
            t = dev.time(dev.trace(lambda: user_softmax[(m,)](y, x, n, BLOCK=block, num_warps=warps)))
            nbytes = 2 * m * n * 2
            rows.append((f"{m}×{n}", warps, f"{t * 1e6:.1f}", f"{nbytes / t / 1e12:.2f}",
                         f"{nbytes / t / A100.dram_bytes_per_s:.0%}"))
    return markdown(["rows × cols (fp16)", "warps", "µs", "TB/s", "of DRAM peak"], rows)


def run(quick):
    table, worst = compare(6 if quick else 40)
    return "\n".join([f"Library matmul, traced vs stated profile (worst difference {worst:.2%}; goal: within 5 %):",
                      "", table, "", "A user-written fused softmax, timed from its traced launch alone:", "",
                      user_kernel(), ""])


def main(argv=None):
    common.main(__doc__, "profiles", run, argv)


if __name__ == "__main__":
    main()
