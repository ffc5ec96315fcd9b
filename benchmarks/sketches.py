"""Lecture §5.3-5.5: the sketches Ansor's rules generate, what random annotation alone finds,
and why partial programs are not pruned.

§5.3 lists each rule's verdict for square, matmul+ReLU, wgrad (512x512, K = 32768), a
16 x 1,000,000 row sum and ResNet-50's last convolution, and runs the rfactor sketch's program
on the CPU executor at 96x80, K = 2048, for split 1, 4 and 16 (only the grouping of the
additions changes).  §5.4 is the median of 1,000 random annotations, as a share of the
optimum.  §5.5 trains Ansor's model on 2,000 complete programs and scores 1,000 others with
only their first k decisions made (split-K, BM, BN, BK, warps, stages, GROUP_M; the rest at
their first value, "not done yet"): pairwise accuracy and recall@10 against the true times.
"""
from __future__ import annotations

import numpy as np

import kernels
from autotune import Config, Task
from autotune import features as F
from autotune.model import CostModel, throughput
from autotune.tuners import AnsorTuner
from benchmarks import common
from benchmarks.ansor_compare import CONV
from benchmarks.common import machine, markdown
from kernels.gemm import DEFAULT
from kernels.shapes import SHAPES
from minitriton.hypogpu import oracle

ORDER = ("SPLIT_K", "BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages", "GROUP_M")


def _tasks():
    return [("square", Task(kernels.matmul, **SHAPES["square"])),
            ("matmul + ReLU (4096³)", Task(kernels.matmul_relu, **SHAPES["square"])),
            ("wgrad", Task(kernels.matmul, **SHAPES["wgrad"])),
            ("row sum 16 x 1,000,000", Task(kernels.row_sum, M=16, N=1_000_000)),
            ("conv2d (ResNet-50 last 3x3, batch 16)", Task(kernels.conv2d, **CONV))]


def generated():
    rows = []
    for name, task in _tasks():
        for d in task.sketches.decisions:
            rows.append([name, d.name, "yes" if d.applies else "no", d.reason])
    return markdown(["task", "sketch", "generated", "why"], rows)


def rfactor_numbers():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((96, 2048)).astype(np.float32)
    b = rng.standard_normal((2048, 80)).astype(np.float32)
    want = kernels.gemm.reference(a, b)
    rows, first = [], None
    for split in (1, 4, 16):
        cfg = Config({**DEFAULT.kwargs, "SPLIT_K": split}, num_warps=4, num_stages=3)
        c = kernels.matmul(a, b, config=cfg)
        first = c if first is None else first
        rows.append([split, f"{np.abs(c.astype(np.float64) - want).max():.1e}",
                     f"{np.abs(c.astype(np.float64) - first).max():.1e}"])
    return markdown(["SPLIT_K", "max abs error vs float64 (fp32 in, fp32 out)", "max difference from SPLIT_K = 1"],
                    rows)


def random_annotation(n=1000):
    rows = []
    for name, task in _tasks():
        if name not in ("square", "wgrad"):
            continue
        truth = oracle(task)
        tuner = AnsorTuner(seed=0)
        tuner.task, tuner.space = task, task.space
        tuner._setup()
        genes, _ = tuner.annotate(n)
        times = truth.times[tuner._flat(genes)]
        share = truth.times.min() / times
        runs = np.isfinite(times)
        rows.append([name, n, f"{100 * np.median(share):.1f}", f"{100 * np.median(share[runs]):.1f}",
                     f"{100 * np.mean(~runs):.0f}", f"{100 * share.max():.1f}"])
    return markdown(["task", "random programs", "median % of optimum (a failure counts 0)",
                     "median of those that run", "% that fail to run", "best %"], rows)


def partial_programs(train_n=2000, test_n=1000, seed=0):
    rows = []
    for name, task in _tasks():
        if name not in ("square", "wgrad"):
            continue
        truth = oracle(task)
        space = task.space
        x = F.program_matrix(task, space)
        rng = np.random.default_rng(seed)
        ok = np.flatnonzero(np.isfinite(truth.times))
        pick = rng.choice(ok, train_n + test_n, replace=False)
        train, test = pick[:train_n], pick[train_n:]
        model = CostModel("reg", weighted=True).fit(x[train], throughput(truth.times[train]))
        pos = np.stack(np.unravel_index(test, space.sizes), axis=1)
        true = -truth.times[test]
        for k in range(len(ORDER) + 1):
            partial = pos.copy()
            for name_k in ORDER[k:]:
                partial[:, space.names.index(name_k)] = 0  # not decided yet: the first value
            score = model.predict(x[np.ravel_multi_index(partial.T, space.sizes)])
            i, j = rng.integers(test_n, size=(2, 20000))
            differ = true[i] != true[j]
            # a tie in the model's score is a coin toss: half right
            agree = np.where(score[i] == score[j], 0.5, np.sign(score[i] - score[j]) == np.sign(true[i] - true[j]))
            ranked = np.lexsort((rng.random(test_n), -score))[:10]
            top = set(ranked.tolist()) & set(np.argsort(-true)[:10].tolist())
            rows.append([name, k, " → ".join(ORDER[:k]) or "(none)", f"{100 * agree[differ].mean():.0f}", len(top) / 10])
    return markdown(["task", "k", "decisions made", "pairwise accuracy %", "recall@10"], rows)


def run(quick: bool) -> str:
    return ("§5.3 sketches generated by the rules:\n\n" + generated() +
            "\n\nThe rfactor sketch's program on the CPU executor (96x80, K = 2048):\n\n" + rfactor_numbers() +
            "\n\n§5.4 random annotation alone:\n\n" + random_annotation(200 if quick else 1000) +
            "\n\n§5.5 scoring partial programs with a model trained on complete ones:\n\n" +
            partial_programs(500 if quick else 2000, 300 if quick else 1000) + f"\n\nOn {machine()}.\n")


def main(argv=None):
    common.main(__doc__, "sketches", run, argv)


if __name__ == "__main__":
    main()
