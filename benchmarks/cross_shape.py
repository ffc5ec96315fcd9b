"""Lecture §2.3: why `key` matters — each shape's optimal config run on every other shape."""
from __future__ import annotations

import numpy as np

import kernels
from autotune import Task
from benchmarks import common
from benchmarks.common import markdown
from kernels.shapes import SHAPES, LECTURE_FIVE
from minitriton.hypogpu import oracle


def run():
    truths = {name: oracle(Task(kernels.matmul, **SHAPES[name])) for name in LECTURE_FIVE}
    rows, off = [], []
    for tuned_on in LECTURE_FIVE:
        cfg = truths[tuned_on].best_config
        cells = []
        for run_on in LECTURE_FIVE:
            slow = truths[run_on].time_of(cfg) / truths[run_on].best_time
            cells.append(f"{slow:.2f}×")
            if run_on != tuned_on:
                off.append(slow)
        rows.append([f"best for {tuned_on}"] + cells)
    table = markdown(["config \\ run on", *LECTURE_FIVE], rows)
    return table + (f"\n\nOff the diagonal: median slowdown {np.median(off):.2f}×, maximum {max(off):.2f}× "
                    f"(lecture: 2.35× and 6.66×).\n")


def main(argv=None):
    common.main(__doc__, "cross_shape", lambda quick: run(), argv)


if __name__ == "__main__":
    main()
