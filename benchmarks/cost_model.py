"""Lecture §4.3 and §4.1: how well AutoTVM's cost model ranks configs it has not seen, and
what the model and the tuner cost.

§4.3: trained on n random configs (n = 64 ... 512) of a shape's space, the model scores 3,000
other configs; the table gives Spearman's ρ against the true throughput (HypoGPU's oracle)
and recall@30 (how many of the 30 truly fastest of those 3,000 are among its top 30), for
knob and program features and the rank and regression objectives, median of 5 seeds.
§4.1: training time on 512 samples, prediction time per config (100,000 at once), the tuner's
own CPU time per 64 measurements, and the wall time of a 1,024-measurement tuning of square.
Goals (issue 9): ≤ 0.5 s of tuner CPU per 64 configs; a 1,024-measurement tuning under 60 s.
"""
from __future__ import annotations

import time

import numpy as np

import kernels
from autotune import Task
from autotune import features as F
from autotune.model import CostModel, throughput
from benchmarks import common
from benchmarks.common import machine, markdown, tuner_cpu
from kernels.shapes import SHAPES
from minitriton.hypogpu import oracle


def _spearman(a, b):
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1])


def ranking(quick: bool) -> str:
    sizes = (64, 256) if quick else (64, 128, 256, 512)
    seeds = range(2 if quick else 5)
    rows = []
    for shape in ("square", "decode", "wgrad"):
        task = Task(kernels.matmul, **SHAPES[shape])
        times = oracle(task).times
        mats = {"program": F.program_matrix(task, task.space), "knob": F.knob_matrix(task.space)}
        for feat, x in mats.items():
            for objective in ("rank", "reg"):
                cells = []
                for n in sizes:
                    rho, rec = [], []
                    for seed in seeds:
                        rng = np.random.default_rng(seed)
                        pick = rng.choice(times.size, n + 3000, replace=False)
                        train, test = pick[:n], pick[n:]
                        model = CostModel(objective, seed=seed).fit(x[train], throughput(times[train]))
                        pred, true = model.predict(x[test]), throughput(times[test])
                        rho.append(_spearman(pred, true))
                        rec.append(len(set(np.argsort(-true)[:30]) & set(np.argsort(-pred)[:30])) / 30)
                    cells.append(f"{np.median(rho):.2f} / {np.median(rec):.2f}")
                rows.append([shape, feat, objective, *cells])
    return markdown(["shape", "features", "objective", *[f"ρ / recall@30, {n} samples" for n in sizes]], rows)


def cost(quick: bool) -> str:
    task = Task(kernels.matmul, **SHAPES["square"])
    times = oracle(task).times
    x = F.program_matrix(task, task.space)
    rng = np.random.default_rng(0)
    train = rng.choice(times.size, 512, replace=False)
    t = time.process_time()
    model = CostModel("rank").fit(x[train], throughput(times[train]))
    fit = time.process_time() - t
    t = time.perf_counter()
    model.predict(x[:100_000])
    per = (time.perf_counter() - t) / 100_000
    budget = 256 if quick else 1024

    per_64, wall = tuner_cpu(task, "autotvm", budget)
    rows = [["training on 512 samples", f"{fit * 1e3:.0f} ms CPU", ""],
            ["prediction per config (100,000 at once)", f"{per * 1e6:.2f} µs", ""],
            ["tuner CPU per 64 measurements", f"{per_64:.2f} s", "≤ 0.5 s: " + ("met" if per_64 <= 0.5 else "missed")],
            [f"wall time of a {budget}-measurement tuning of square", f"{wall:.1f} s",
             ("< 60 s: " + ("met" if wall < 60 else "missed")) if budget == 1024 else "(quick run)"]]
    return markdown(["what", "measured", "goal"], rows)


def run(quick: bool) -> str:
    return ("§4.3 ranking quality on 3,000 unseen configs (median of "
            f"{2 if quick else 5} seeds):\n\n{ranking(quick)}\n\n§4.1 cost:\n\n{cost(quick)}\n\n"
            f"On {machine()}.\n")


def main(argv=None):
    common.main(__doc__, "cost_model", run, argv)


if __name__ == "__main__":
    main()
