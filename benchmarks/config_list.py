"""Lecture §2.2: Triton's 24-config list on the five shapes.

Triton's exhaustive autotune measures every config of the list (here through HypoGPU's noisy
Measurer) and keeps the fastest; the table scores that pick against the true optimum of the
full 157,500-config space, which the list may not even contain.
"""
from __future__ import annotations

import kernels
from autotune import Task, tune
from benchmarks import common
from benchmarks.common import markdown
from kernels.shapes import SHAPES, LECTURE_FIVE, triton_list
from minitriton.hypogpu import oracle


def run(seed=0):
    rows = []
    for name in LECTURE_FIVE:
        task = Task(kernels.matmul, **SHAPES[name])
        truth = oracle(task)
        picked = tune(task, "exhaustive", configs=triton_list(), seed=seed)
        legal = sum(r.ok for r in picked.history)
        list_best = min(truth.time_of(c) for c in triton_list())
        b = truth.best_config.all_kwargs()
        rows.append((name, f"{legal}/24", f"{truth.best_time / truth.time_of(picked.best_config):.1%}",
                     f"{truth.best_time / list_best:.1%}", f"{picked.simulated_seconds:.0f} s",
                     "{BLOCK_M}/{BLOCK_N}/{BLOCK_K} w{num_warps} s{num_stages} g{GROUP_M} k{SPLIT_K}".format(**b)))
    return markdown(["shape", "legal", "autotune's pick / optimum", "list's true best / optimum",
                     "tuning time (simulated)", "optimum (BM/BN/BK warps stages GROUP_M SPLIT_K)"], rows)


def main(argv=None):
    common.main(__doc__, "config_list", lambda quick: run(), argv)


if __name__ == "__main__":
    main()
