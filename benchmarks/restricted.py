"""Recorded landscapes that keep a few per cent of their product, as Kernel Tuner's restrictions do.

The default tuner judges a recorded space by the configs its file holds, not its product
(autotune.tuners.default_tuner, Space.size_bound): a file with 29,136 configs of a 157,500-point
product gets the GP and TPE in turn ("bayes_tpe") where it used to get Ansor.  This checks that rule on
landscapes no tuner was chosen on: HypoGPU's exact matmul landscapes (wgrad and small),
exported as Kernel Tuner cache files and cut by the RULES below, then replayed.  For the default,
Ansor (the default before) and random sampling: the best true time found as % of the optimum
after 25-400 measurements, median and interquartile range of 20 seeds (5 with --quick, to 100).
Goal (printed): the default at or above Ansor at every budget, medians compared as printed.
"""
from __future__ import annotations

import json
import pathlib
import tempfile

import numpy as np

import kernels
from autotune import Task
from autotune.tuners import default_tuner
from benchmarks import common, curve_store
from benchmarks.common import machine, markdown
from benchmarks.leaderboard import BUDGETS, median_cells, run_curves
from kernels.shapes import SHAPES as SIZES
from minitriton.replay import Replay, export_cache

SHAPES = ("wgrad", "small")
RULES = {  # Kernel-Tuner-style restrictions on a matmul's knobs, each kept config passes all
    "shared memory <= 96 KiB": lambda c: (c["BLOCK_M"] + c["BLOCK_N"]) * c["BLOCK_K"] * 2 * c["num_stages"]
    <= 96 * 1024,
    "4+ elements per thread": lambda c: c["num_warps"] * 32 * 4 <= c["BLOCK_M"] * c["BLOCK_N"],
    "GROUP_M <= 8": lambda c: c["GROUP_M"] <= 8,
    "SPLIT_K <= 8": lambda c: c["SPLIT_K"] <= 8,
    "pipelined (2+ stages)": lambda c: c["num_stages"] >= 2,
}


def restricted_file(shape: str, folder: pathlib.Path) -> tuple[pathlib.Path, int, int]:
    """HypoGPU's landscape of `shape` as a cache file holding only the configs RULES keep;
    with the product's size and the configs kept."""
    full = export_cache(folder / f"{shape}_full.json", Task(kernels.matmul, **SIZES[shape]),
                        kernel_name=f"matmul_{shape}")
    doc = json.loads(pathlib.Path(full).read_text())
    product = len(doc["cache"])
    doc["cache"] = {k: e for k, e in doc["cache"].items() if all(rule(e) for rule in RULES.values())}
    path = folder / f"{shape}_restricted.json"
    path.write_text(json.dumps(doc))
    return path, product, len(doc["cache"])


def run(quick: bool) -> str:
    budget = 100 if quick else 400
    seeds = range(5 if quick else 20)
    budgets = [b for b in BUDGETS if b <= budget]
    with tempfile.TemporaryDirectory() as tmp:
        files = {shape: restricted_file(shape, pathlib.Path(tmp)) for shape in SHAPES}
        task = Replay(files[SHAPES[0]][0]).task()
        default = default_tuner(task, task.space)
        tuners = list(dict.fromkeys([default, "ansor", "random"]))
        jobs = [(str(path), tuner, budget, s) for path, _, _ in files.values() for tuner in tuners for s in seeds]
        # the leaderboard's store (keyed by each cut file's hash): a rerun measures only what changed
        done = run_curves(jobs, None if quick else curve_store.Store())
    rows, verdict = [], []
    for shape, (path, product, kept) in files.items():
        med = {}
        for tuner in tuners:
            pct = 100 * np.stack([done[(str(path), tuner, budget, s)][0] for s in seeds])
            m, cells = median_cells(pct, budgets)
            med[tuner] = [round(float(m[b - 1]), 1) for b in budgets]
            label = f"{tuner} (default)" if tuner == default else tuner
            rows.append([f"{shape}: {kept:,} of {product:,}", label, *cells])
        verdict += [f"{shape} after {b}: {default} {d} < ansor {a}"
                    for b, d, a in zip(budgets, med[default], med["ansor"]) if d < a]
    head = ["landscape: configs kept", "tuner", *(f"% after {b} (IQR)" for b in budgets)]
    goals = "Goal (default at or above Ansor everywhere): " + ("met." if not verdict else "missed: " + "; ".join(verdict) + ".")
    return (markdown(head, rows) + f"\n\nRestrictions: {'; '.join(RULES)}. Median of {len(seeds)} seeds on the "
            f"Replay device; on {machine()}.\n\n{goals}\n")


def main(argv=None):
    common.main(__doc__, "restricted", run, argv)


if __name__ == "__main__":
    main()
