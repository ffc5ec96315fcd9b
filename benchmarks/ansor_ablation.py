"""Lecture §5.7 (Ansor's figure 7): what each part of Ansor is worth.

Four variants, 1,024 measurements each (median of 5 seeds), best true time found as a share
of the optimum: `full` Ansor; `beam` (programs built decision by decision, partial programs
pruned by the model, no fine-tuning); `no_finetune` (random annotations ranked by the model);
`limited` (no rfactor sketch, tiles up to 128: a hand-written template's space).  On square,
wgrad, and ResNet-50's last convolution through the conv2d kernel.  `--plot FILE.png` draws
the curves.
"""
from __future__ import annotations

import numpy as np

import kernels
from autotune import Task
from autotune.tuners import AnsorTuner
from benchmarks import common
from benchmarks.ansor_compare import CONV
from benchmarks.common import machine, markdown, plot_curves, share_curve, to_reach
from kernels.shapes import SHAPES
from minitriton.hypogpu import oracle

VARIANTS = ("full", "beam", "no_finetune", "limited")
BUDGETS = (64, 256, 1024)


def run(quick: bool, plot: str | None = None):
    budget, seeds = (256, range(2)) if quick else (1024, range(5))
    tasks = [("square", Task(kernels.matmul, **SHAPES["square"])), ("wgrad", Task(kernels.matmul, **SHAPES["wgrad"])),
             ("conv2d", Task(kernels.conv2d, **CONV))]
    rows, curves = [], {}
    for name, task in tasks:
        truth = oracle(task)
        for variant in VARIANTS:
            runs = [share_curve(task, AnsorTuner(variant=variant, seed=s), budget, s, truth) for s in seeds]
            curve = np.median(np.stack([r.curve for r in runs]), axis=0)
            curves[name, variant] = curve
            reach = sorted(to_reach(r.curve) or np.inf for r in runs)[len(runs) // 2]
            rows.append([name, variant, *(f"{100 * curve[b - 1]:.1f}" for b in BUDGETS if b <= budget),
                         "never" if not np.isfinite(reach) else f"{reach:.0f}", f"{np.median([r.wall for r in runs]):.1f}"])
    head = ["task", "variant", *(f"% after {b}" for b in BUDGETS if b <= budget), "to 99 %", "wall s per tuning"]
    text = markdown(head, rows) + f"\n\nMedian of {len(seeds)} seeds; HypoGPU's noisy Measurer; on {machine()}.\n"
    if plot:
        plot_curves(curves, plot)
        text += f"\nCurves drawn in {plot}.\n"
    return text


def main(argv=None):
    common.main_with_plot(__doc__, "ansor_ablation", run, argv)


if __name__ == "__main__":
    main()
