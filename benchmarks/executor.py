"""How fast the CPU executor runs the tutorial matmul, against numpy in the same process.

1024³, fp16 inputs, fp32 accumulation, fp16 output; BLOCK_M = BLOCK_N = BLOCK_K = 64 and 128.
Baseline: numpy's float32 matmul of the same operands (already in float32).  Also times the
one-program-at-a-time path and checks how the two paths agree: lockstep multiplies the grid of
tiles as one GEMM, one program alone its own tile, and BLAS may order those calls' K sums
differently (it depends on the CPU's BLAS kernel), so they agree bit for bit or within the
fp32 accumulation bound, which the table says.
Goal (issue 2): lockstep at most 3x numpy at BLOCK 64 and 2x at BLOCK 128.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from benchmarks import common
from benchmarks.common import median_time, markdown, machine
import minitriton as mt
from kernels import gemm
from minitriton.testing import assert_dot_close


def paired(fn, base, repeats):
    """Median times of fn and base, and the median of their per-pair ratios.

    Runs alternate, so a slow patch of a shared machine hits both sides of a pair."""
    fn(), base()
    t_fn, t_base = [], []
    for _ in range(repeats):
        t_fn.append(median_time(fn, 1, warmup=0))
        t_base.append(median_time(base, 1, warmup=0))
    ratios = np.array(t_fn) / np.array(t_base)
    return float(np.median(t_fn)), float(np.median(t_base)), float(np.median(ratios))


def run(quick: bool):
    rng = np.random.default_rng(0)
    n = 1024
    a = rng.standard_normal((n, n)).astype(np.float16)
    b = rng.standard_normal((n, n)).astype(np.float16)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    repeats = 5 if quick else 21
    numpy_mm = lambda: a32 @ b32
    rows, missed = [], []
    for block, goal in ((64, 3.0), (128, 2.0)):
        cfg = dict(BLOCK_M=block, BLOCK_N=block, BLOCK_K=block, GROUP_M=8, SPLIT_K=1)
        lock, base, ratio = paired(lambda: gemm.matmul(a, b, config=cfg), numpy_mm, repeats)
        floor, _, floor_ratio = paired(lambda: per_program_products(a32, b32, block), numpy_mm, repeats)
        c_lock = gemm.matmul(a, b, config=cfg)
        c_one = one_at_a_time(a, b, cfg)
        one = median_time(lambda: one_at_a_time(a, b, cfg), 1 if quick else 3, warmup=0)
        same = agreement(c_lock, c_one, a, b)
        if ratio > goal or same == "NO":
            missed.append(f"BLOCK {block}: {ratio:.2f}x, paths {same}")
        rows.append((f"BLOCK {block}", f"{base * 1e3:.1f}", f"{lock * 1e3:.1f}", f"**{ratio:.2f}×**", f"≤ {goal:.0f}×",
                     f"{floor_ratio:.2f}×", f"{one * 1e3:.0f} ({one / base:.0f}×)", same))
    table = markdown(["config", "numpy fp32 ms", "lockstep ms", "lockstep / numpy", "goal",
                      "floor: per-program BLAS calls alone / numpy", "one program at a time ms (/ numpy)", "paths agree"], rows)
    goals = "met" if not missed else "missed: " + "; ".join(missed)
    return table + (f"\n\n1024³ matmul, fp16 in, fp32 accumulate, fp16 out, BLOCK_M = BLOCK_N = BLOCK_K; "
                    f"medians of {repeats} alternating runs on {machine()}.\n\n"
                    f"Goals (lockstep ≤ 3× numpy at BLOCK 64 and ≤ 2× at BLOCK 128, the paths agreeing): {goals}.\n")


def agreement(x, y, a, b):
    """'same bits', 'within the fp32 bound (n elements a last bit apart)', or 'NO'."""
    differ = int(np.count_nonzero(x.view(np.uint16) != y.view(np.uint16)))
    if not differ:
        return "same bits"
    try:
        assert_dot_close(x, y, a, b)
    except AssertionError:
        return "NO"
    return f"within the fp32 bound ({differ} of {x.size} elements differ)"


def per_program_products(a32, b32, block):
    """The floor under the lockstep path: each program's (block x K) @ (K x block) product as
    one np.matmul over strided views, with no executor around it.  Bit identity between the
    paths needs one BLAS call per program (BLAS rounds differently for different shapes), so
    this, not one big GEMM, is the best the executor can do."""
    n = a32.shape[0]
    g = n // block
    av = as_strided(a32, shape=(g, g, block, n), strides=(0, block * a32.strides[0]) + a32.strides)
    bv = as_strided(b32, shape=(g, g, n, block), strides=(block * b32.strides[1], 0) + b32.strides)
    return np.matmul(av, bv)


def one_at_a_time(a, b, cfg):
    """The fallback path: every program of the launch run separately."""
    with mt.one_program_at_a_time():
        return gemm.matmul(a, b, config=cfg)


def main(argv=None):
    common.main(__doc__, "executor", run, argv)


if __name__ == "__main__":
    main()
