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
group, 2 seeds, 50 measurements.
"""
from __future__ import annotations

import os

import numpy as np

from benchmarks import common, peers
from benchmarks.leaderboard import landscape
from benchmarks.common import markdown, machine

BUDGETS = (25, 50, 100, 200, 400)


def groups(paths) -> list:
    """The files that share a search space, in groups of two or more."""
    from minitriton.replay import Replay
    by = {}
    for p in paths:
        r = Replay(p)
        by.setdefault(repr(sorted((k, [str(v) for v in r.values[k]]) for k in r.params)), []).append(str(p))
    return [g for g in by.values() if len(g) > 1]


def _curve(job):
    from autotune import tune
    target, sources, budget, seed = job
    task, truth = landscape(target)
    if sources == "kernel_tuner":
        return {s: peers.kernel_tuner_curve(target, s, budget, seed, truth.best_time) for s in peers.KERNEL_TUNER}
    result = tune(task, budget=budget, seed=seed, progress=False, transfer=list(sources))
    times = np.array([truth.time_of(r.config) for r in result.history])
    curve = truth.best_time / np.minimum.accumulate(times)
    return np.pad(curve, (0, budget - curve.size), mode="edge")


def sources_hold_a_good_config(target, sources, top=25, share=0.95) -> bool:
    """Whether some source's `top` fastest configs hold one within 5 % of the target's optimum."""
    from minitriton.replay import Replay
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


def run(quick: bool) -> str:
    from autotune.tuners import default_tuner
    files, where = common.datasets()
    budget = 50 if quick else max(BUDGETS)
    budgets = [b for b in BUDGETS if b <= budget]
    seeds = range(2 if quick else 20)
    kt = peers.available()["kernel_tuner"] is not None
    plan = groups(files)[:1] if quick else groups(files)
    jobs = []
    for group in plan:
        for target in group:
            others = tuple(p for p in group if p != target)
            for s in seeds:
                jobs += [(target, others, budget, s), (target, (), budget, s)] + \
                    ([(target, "kernel_tuner", budget, s)] if kt else [])
    with common.process_pool() as pool:
        done = dict(zip(jobs, pool.map(_curve, jobs, chunksize=1)))
    rows, missed = [], []
    for group in plan:
        for target in group:
            others = tuple(p for p in group if p != target)
            task, _ = landscape(target)
            default = default_tuner(task, task.space)
            good = sources_hold_a_good_config(target, others)
            med = {how: 100 * np.median([done[(target, src, budget, s)] for s in seeds], 0)
                   for how, src in (("with", others), ("without", ()))}
            cells = [name(target), ", ".join(name(o).rsplit("_", 1)[-1] if "_" in name(o) else name(o) for o in others),
                     "yes" if good else "no"]
            for b in budgets:
                text = f"{med['with'][b - 1]:.1f} / {med['without'][b - 1]:.1f}"
                if kt:
                    best = max(np.median([done[(target, "kernel_tuner", budget, s)][k][b - 1] for s in seeds])
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
    goals = "Goals: " + ("met." if not missed else "missed: " + "; ".join(missed) + ".")
    return (markdown(head, rows) + f"\n\nMedian % of the optimum over {len(seeds)} seeds; the default tuner "
            f"({default}) with the other GPUs as sources, without them, and {said}; {where}; on {machine()}.\n\n"
            f"{goals}\n")


def main(argv=None):
    common.main(__doc__, "cross_gpu", run, argv)


if __name__ == "__main__":
    main()
