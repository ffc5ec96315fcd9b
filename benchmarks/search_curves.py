"""Lecture §4.6: search curves of grid, random and AutoTVM on HypoGPU.

For each of the lecture's five matmul shapes, each tuner runs with seeds 0-4; the table gives
the best true time found (HypoGPU's oracle) as a share of the optimum after 64, 128, 256, 512
and 1,024 measurements, median over the seeds, and what the user gets: the true share of the
config the tuning chose (the winner's curse settled by re-timing, tune's remeasure="auto").  Goals (issue 9): AutoTVM ≥ 99 % within 256 and
≥ 96 % within 128 on every shape.  `--plot FILE.png` draws the curves (matplotlib, optional).
"""
from __future__ import annotations

import numpy as np

import kernels
from autotune import Task
from benchmarks import common
from benchmarks.common import machine, markdown, plot_curves, share_curve
from kernels.shapes import LECTURE_FIVE, SHAPES
from minitriton.hypogpu import oracle

BUDGETS = (64, 128, 256, 512, 1024)
# Kernel Tuner 1.5's strategies on HypoGPU's landscapes exported as cache files (simulation mode,
# median of 5 seeds, % of optimum after 64/128/256/512): the best of genetic algorithm, PSO,
# simulated annealing, dual annealing and differential evolution at each budget.  Quoted from
# issue 9, not rerun here (kernel_tuner is not a dependency; issue 12 brings the export).
KERNEL_TUNER_BEST = {"square": (79.6, 95.6, 98.2, 98.6), "wgrad": (93.1, 97.3, 99.2, 99.8)}
TUNERS = ("grid", "random", "autotvm")


def curves(quick: bool):
    budgets = BUDGETS[:3] if quick else BUDGETS
    seeds = range(2 if quick else 5)
    out = {}
    for shape in LECTURE_FIVE:
        task = Task(kernels.matmul, **SHAPES[shape])
        truth = oracle(task)
        for tuner in TUNERS:
            runs = [share_curve(task, tuner, budgets[-1], seed, truth) for seed in seeds]
            out[shape, tuner] = (np.median(np.stack([r.curve for r in runs]), axis=0),
                                 float(np.median([r.wall for r in runs])),
                                 float(np.median([r.chosen for r in runs])), float(np.median([r.found for r in runs])),
                                 float(max(r.retime for r in runs)))
    return out, budgets


def run(quick: bool, plot: str | None = None):
    data, budgets = curves(quick)
    rows, missed = [], []
    for (shape, tuner), (curve, wall, chosen, found, retime) in data.items():
        cells = [f"{100 * curve[b - 1]:.1f}" for b in budgets]
        if chosen < found - 0.005:
            missed.append(f"{shape} {tuner}: chose {100 * chosen:.1f} % where it measured {100 * found:.1f} %")
        if retime > 0.05:
            missed.append(f"{shape} {tuner}: settling the choice took {100 * retime:.1f} % of the simulated time")
        if tuner == "autotvm":
            if curve[127] < 0.96:
                missed.append(f"{shape}: {100 * curve[127]:.1f} % after 128 (goal 96 %)")
            if curve[255] < 0.99 if len(curve) >= 256 else False:
                missed.append(f"{shape}: {100 * curve[255]:.1f} % after 256 (goal 99 %)")
        rows.append([shape, tuner, *cells, f"{100 * chosen:.1f}", f"{100 * retime:.2f}", f"{wall:.1f}"])
    table = markdown(["shape", "tuner", *[f"% of optimum after {b}" for b in budgets],
                      f"chosen config % (after {budgets[-1]})", "re-timing % of simulated time (worst seed)",
                      "wall s per tuning"], rows)
    goals = ("Goals (AutoTVM ≥ 96 % after 128 and ≥ 99 % after 256 on every shape; every tuner's chosen config "
             "within 0.5 % of the best it measured, for at most 5 % more simulated time): " +
             ("met." if not missed else "missed on " + "; ".join(missed) + "."))
    goals += "\n\n" + _against_kernel_tuner(data, budgets)
    text = (table + f"\n\nMedian of {2 if quick else 5} seeds; true times from HypoGPU's oracle; measured with "
            f"HypoGPU's noisy Measurer; on {machine()}.\n\n{goals}\n")
    if plot:
        plot_curves({k: v[0] for k, v in data.items()}, plot)
        text += f"\nCurves drawn in {plot}.\n"
    return text


def _against_kernel_tuner(data, budgets) -> str:
    """AutoTVM against the best Kernel Tuner strategy at each budget (quoted numbers, see above)."""
    rows, behind = [], []
    for shape, theirs in KERNEL_TUNER_BEST.items():
        if (shape, "autotvm") not in data:
            continue
        curve = data[shape, "autotvm"][0]
        for b, kt in zip(BUDGETS, theirs):
            if b > budgets[-1]:
                continue
            ours = 100 * curve[b - 1]
            rows.append([shape, b, f"{ours:.1f}", f"{kt:.1f}", "ahead" if ours > kt else "**behind**"])
            if ours <= kt:
                behind.append(f"{shape} after {b}")
    table = markdown(["shape", "measurements", "AutoTVM %", "Kernel Tuner best strategy % (quoted)", ""], rows)
    verdict = "ahead at every budget." if not behind else "behind on " + ", ".join(behind) + "."
    return (f"Against Kernel Tuner 1.5 (numbers quoted from issue 9, not rerun here): AutoTVM is {verdict}\n\n"
            + table)


def main(argv=None):
    common.main_with_plot(__doc__, "search_curves", run, argv)


if __name__ == "__main__":
    main()
