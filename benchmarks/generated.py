"""Issue 11: operators generated from a te computation against the hand-written library kernels.

For matmul (C = A·B, fp16 in, fp32 accumulation, fp16 out) on the lecture's five shapes: the
generated operator's optimum over its sketches' spaces (HypoGPU's oracle) against the library
matmul's optimum, and Ansor with 512 measurements on the generated operator (median of 5
seeds, % of the generated optimum).  Then the CPU executor's speed: the generated kernel
against the library kernel at 1024³ under the same config (medians of alternating runs).
Goals: optimum within 5 % of the library's on every shape; Ansor ≥ 99 % within 512;
generated kernels within 1.5x of the library's speed on the CPU.
"""
from __future__ import annotations

import numpy as np

from benchmarks import common
from benchmarks.common import markdown, machine, median_time, share_curve


def _matmul_op():
    from autotune import te
    M, N, K = te.var("M"), te.var("N"), te.var("K")
    A = te.placeholder((M, K), "float16", name="A")
    B = te.placeholder((K, N), "float16", name="B")
    k = te.reduce_axis(K, name="k")
    return te.generate(te.compute((M, N), lambda m, n: te.sum(A[m, k] * B[k, n], axis=k), name="C"))


def optima(quick: bool):
    import kernels
    from kernels.shapes import SHAPES, LECTURE_FIVE
    from autotune import Task
    from minitriton.hypogpu import oracle
    op = _matmul_op()
    seeds = range(2 if quick else 5)
    rows, worst, ansor_missed = [], 1.0, []
    for name in LECTURE_FIVE:
        gen, lib = Task(op, **SHAPES[name]), Task(kernels.matmul, **SHAPES[name])
        tg, tl_ = oracle(gen), oracle(lib)
        ratio = tl_.best_time / tg.best_time
        worst = min(worst, ratio)
        shares = [share_curve(gen, "ansor", 512, s, tg)[0][-1] for s in seeds]
        med = float(np.median(shares))
        if med < 0.99:
            ansor_missed.append(name)
        rows.append([name, f"{tg.best_time * 1e6:.1f}", f"{tl_.best_time * 1e6:.1f}", f"{100 * ratio:.1f}",
                     len(gen.sketches), f"{100 * med:.1f}"])
    table = markdown(["shape", "generated optimum µs", "library optimum µs", "library / generated %",
                      "sketches", "Ansor % after 512"], rows)
    goals = (f"Goals: generated optimum within 5 % of the library's on every shape: "
             f"{'met' if worst >= 0.95 else 'missed'} (worst {100 * worst:.1f} %); Ansor ≥ 99 % within 512: "
             + ("met" if not ansor_missed else "missed on " + ", ".join(ansor_missed)) +
             ". The conv2d layer is not generated yet (affine indices: see the issue's note).")
    return table + f"\n\nMedian of {len(seeds)} seeds.\n\n" + goals


def cpu_speed(quick: bool):
    import kernels
    rng = np.random.default_rng(0)
    m = 512 if quick else 1024
    a = rng.standard_normal((m, m)).astype(np.float16)
    b = rng.standard_normal((m, m)).astype(np.float16)
    op = _matmul_op()
    cfg = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, SPLIT_K=1, num_warps=8, num_stages=3)
    gen_fn, lib_fn = (lambda: op(a, b, config=cfg)), (lambda: kernels.matmul(a, b, config=cfg))
    same = np.array_equal(gen_fn(), lib_fn())
    tg, tl_ = [], []
    for _ in range(3 if quick else 7):
        tg.append(median_time(gen_fn, 1, warmup=0))
        tl_.append(median_time(lib_fn, 1, warmup=0))
    ratio = float(np.median(np.array(tg) / np.array(tl_)))
    return (markdown(["size", "library ms", "generated ms", "generated / library", "same bits"],
                     [[f"{m}³", f"{np.median(tl_) * 1e3:.1f}", f"{np.median(tg) * 1e3:.1f}", f"**{ratio:.2f}×**",
                       "yes" if same else "no"]]) +
            f"\n\nGoal ≤ 1.5×: {'met' if ratio <= 1.5 else 'missed'}.")


def run(quick: bool) -> str:
    return optima(quick) + "\n\nCPU executor, 128x128x64 tiles:\n\n" + cpu_speed(quick) + f"\n\nOn {machine()}.\n"


def main(argv=None):
    common.main(__doc__, "generated", run, argv)


if __name__ == "__main__":
    main()
