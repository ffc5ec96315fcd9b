"""The demo (`python -m autotune demo`, the README's first command).

It lives with the kernels, not in `autotune/`: it scores the tuners with the oracle, which
nothing under `autotune/` may touch.

Tunes the library matmul on the lecture's five shapes on HypoGPU, with Triton's 24-config list,
random search and Ansor over the full 157,500-config space (Ansor over the sketches its rules
generate at each shape), scores them against the oracle's true optimum, then runs every chosen
config on the CPU at a small size and checks the numbers.
"""
from __future__ import annotations

import numpy as np

import kernels
from kernels.gemm import reference
from kernels.shapes import SHAPES, LECTURE_FIVE, triton_list
from minitriton.hypogpu import oracle
from minitriton.testing import check_configs, accumulation_bound
from autotune import Task, tune


def main(quick: bool = False):
    budget = 64 if quick else 256
    rows, chosen = [], []
    print(f"Tuning kernels.matmul on HypoGPU: Triton's 24-config list (exhaustive), random search and Ansor "
          f"({budget} measurements each) over the full space.\n")
    for name in LECTURE_FIVE:
        task = Task(kernels.matmul, **SHAPES[name])
        truth = oracle(task)
        listed = tune(task, "exhaustive", configs=triton_list(), seed=0)
        searched = tune(task, "random", budget=budget, seed=0)
        ansor = tune(task, "ansor", budget=budget, seed=0)
        legal = sum(r.ok for r in listed.history)
        s = SHAPES[name]
        rows.append(f"| {name} | {s['M']}×{s['N']}×{s['K']} | {legal}/24 | "
                    f"{truth.best_time / truth.time_of(listed.best_config):.1%} | "
                    f"{truth.best_time / truth.time_of(searched.best_config):.1%} | "
                    f"{truth.best_time / truth.time_of(ansor.best_config):.1%} | {len(task.sketches)} | "
                    f"{ansor.simulated_seconds / 60:.1f} min | {truth.best_time * 1e6:.1f} µs |")
        chosen += [listed.best_config, searched.best_config, ansor.best_config]
    print("| shape | M×N×K | list legal | list best / optimum | random best / optimum | Ansor best / optimum | "
          "sketches | Ansor's tuning time (simulated) | optimum |")
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    rng = np.random.default_rng(0)
    a = rng.standard_normal((200, 100)).astype(np.float16)
    b = rng.standard_normal((100, 300)).astype(np.float16)
    unique = list(dict.fromkeys(chosen))
    res = check_configs(lambda c: kernels.matmul(a, b, config=c), unique, reference(a, b),
                        abs_tol=accumulation_bound(a, b))
    print(f"\nAll {len(unique)} chosen configs, run on the CPU at 200×300×100 (fp16): every result within fp16 "
          f"rounding of the float64 reference (max error {max(res.max_abs_error):.3g}), and the configs agree "
          f"to {res.max_ulps_apart:.0f} ulp.")
