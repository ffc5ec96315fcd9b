"""Issue 27: learning a new GPU from the others (cross-GPU transfer), leave one GPU out.

The recorded landscapes (benchmarks.common.datasets) are grouped by their search space (the
same parameters with the same values: one kernel's files on several GPUs; nothing is read from
the file names).  Each GPU of a group is tuned with the group's other files as sources, through
the API a user calls: `tune(Replay(path).task(), budget=n, seed=s, transfer=[other, ...])`;
beside it the same default tuner without transfer, and Kernel Tuner's best strategy at that
budget (its 13 strategies in simulation mode, where the optional `bench` extra is installed).
The table gives the median % of the optimum after 25 / 50 / 100 / 200 / 400 measurements
over 20 seeds, and whether the sources' 25 best configs hold one within 5 % of the target's
optimum (judged from the files, as a score: the tuner never sees the target's times).

Goals (issue 27): on every target whose sources' 25 best hold such a config, the median with
transfer >= 95 % after 25 measurements and >= 98 % after 50; on every target, after 100 and
more, never more than a point below the same tuner without transfer.  `--quick`: the first
group, 2 seeds, 50 measurements; `--seeds N` runs fewer seeds than 20, said so in the table.
"""
from __future__ import annotations

import os

import numpy as np

from autotune.tuners import default_tuner
from benchmarks import common, curve_store, peers
from benchmarks.common import machine, markdown
from benchmarks.leaderboard import DEFAULT, landscape, run_curves, transfer
from minitriton.replay import Replay

BUDGETS = (25, 50, 100, 200, 400)


def groups(paths) -> list:
    """The files that share a search space, in groups of two or more."""
    by = {}
    for p in paths:
        r = Replay(p)
        by.setdefault(repr(sorted((k, [str(v) for v in r.values[k]]) for k in r.params)), []).append(str(p))
    return [g for g in by.values() if len(g) > 1]


def sources_hold_a_good_config(target, sources, top=25, share=0.95) -> bool:
    """Whether some source's `top` fastest configs hold one within 5 % of the target's optimum."""
    _, truth = landscape(target)
    for s in sources:
        r = Replay(s)
        order = sorted((p for p, e in r.records.items() if r.cost(e) is not None), key=lambda p: r.cost(r.records[p]))
        for p in order[:top]:
            if truth.best_time / truth.time_of(dict(zip(r.params, p))) >= share:
                return True
    return False


def name(path) -> str:
    return os.path.basename(path).split(".json")[0]


def run(quick: bool, fresh: bool = False, seeds: int | None = None) -> str:
    files, where = common.datasets()
    budget = 50 if quick else max(BUDGETS)
    budgets = [b for b in BUDGETS if b <= budget]
    seeds = range(seeds or (2 if quick else 20))
    kt = peers.available()["kernel_tuner"] is not None
    plan = groups(files)[:1] if quick else groups(files)
    jobs = []
    for s in seeds:                    # seed by seed: a stopped run leaves whole seeds in the store
        for group in plan:
            for target in group:
                others = tuple(p for p in group if p != target)
                jobs += [(target, transfer(others), budget, s), (target, DEFAULT, budget, s)] + \
                    [(target, k, budget, s) for k in (peers.KERNEL_TUNER if kt else ())]
    # the leaderboard's store: the no-transfer default and Kernel Tuner's curves are the same runs
    done = run_curves(jobs, None if quick or fresh else curve_store.Store())
    rows, missed = [], []
    for group in plan:
        for target in group:
            others = tuple(p for p in group if p != target)
            task, _ = landscape(target)
            default = default_tuner(task, task.space)
            good = sources_hold_a_good_config(target, others)
            med = {how: 100 * np.median([done[(target, src, budget, s)][0] for s in seeds], 0)
                   for how, src in (("with", transfer(others)), ("without", DEFAULT))}
            cells = [name(target), ", ".join(name(o).rsplit("_", 1)[-1] if "_" in name(o) else name(o) for o in others),
                     "yes" if good else "no"]
            for b in budgets:
                text = f"{med['with'][b - 1]:.1f} / {med['without'][b - 1]:.1f}"
                if kt:
                    best = max(np.median([done[(target, k, budget, s)][0][b - 1] for s in seeds])
                               for k in peers.KERNEL_TUNER)
                    text += f" / {100 * best:.1f}"
                cells.append(text)
                if good and b == 25 and med["with"][b - 1] < 95:
                    missed.append(f"{name(target)}: {med['with'][b - 1]:.1f} % after 25 (goal 95)")
                if good and b == 50 and med["with"][b - 1] < 98:
                    missed.append(f"{name(target)}: {med['with'][b - 1]:.1f} % after 50 (goal 98)")
                if b >= 100 and med["with"][b - 1] < med["without"][b - 1] - 1.0:
                    missed.append(f"{name(target)} after {b}: {med['with'][b - 1]:.1f} with transfer, "
                                  f"{med['without'][b - 1]:.1f} without")
            rows.append(cells)
    head = ["target", "sources (the group's other GPUs)", "sources' 25 best hold one within 5 %",
            *(f"after {b}: with / without{' / KT best' if kt else ''}" for b in budgets)]
    said = f"Kernel Tuner {peers.available()['kernel_tuner']}'s best strategy at each budget" if kt else \
        "Kernel Tuner is not installed (`pip install -e '.[bench]'`): no peer column"
    judged = f" (judged on {len(seeds)} seeds; the issue asks 20)" if len(seeds) < 20 else ""
    goals = f"Goals{judged}: " + ("met." if not missed else "missed: " + "; ".join(missed) + ".")
    partial = " (a partial table: the goals are judged on 20)" if len(seeds) < 20 else ""
    return (markdown(head, rows) + f"\n\nMedian % of the optimum over {len(seeds)} seeds{partial}; the default tuner "
            f"({default}) with the other GPUs as sources, without them, and {said}; {where}; on {machine()}.\n\n"
            f"{goals}\n")


def main(argv=None):
    fresh, argv = common.pop_flag(argv, "--fresh")   # measure every curve again, ignoring the store
    seeds, argv = common.pop_count(argv, "--seeds")  # fewer seeds than 20 (a partial table, said so)
    common.main(__doc__, "cross_gpu", lambda quick: run(quick, fresh, seeds), argv)


if __name__ == "__main__":
    main()
