"""Lecture §2.4: dynamic M (decode batches), and what power-of-two bucketing costs.

N = 11008, K = 4096 (the decode FFN up-projection).  Every config is chosen by the oracle
(an ideal tuner), so the numbers show the cost of the key policy alone: tuning at the
bucket's M and launching at the real one, against tuning every exact M.
"""
from __future__ import annotations

import numpy as np

import kernels
import minitriton as mt
from autotune import Task
from benchmarks import common
from benchmarks.common import markdown
from minitriton.hypogpu import oracle

N, K = 11008, 4096


def run(stream: int, seed: int = 0):
    cache = {}

    def truth(m):
        if m not in cache:
            cache[m] = oracle(Task(kernels.matmul, M=m, N=N, K=K))
        return cache[m]

    rows = []
    for m in (1, 2, 4, 8, 16, 32, 64, 128, 256):
        t = truth(m)
        rows.append((m, t.best_config["BLOCK_M"], f"{t.best_time * 1e6:.1f}"))
    first = markdown(["M", "best BLOCK_M", "optimum µs"], rows)
    slow16 = truth(256).time_of(truth(16).best_config) / truth(256).best_time

    rng = np.random.default_rng(seed)
    ms = rng.integers(1, 4097, stream)
    exact, bucketed = set(), set()
    slowdowns = []
    for m in ms.tolist():
        exact.add(m)
        b = mt.next_power_of_2(m)
        bucketed.add(b)
        slowdowns.append(truth(m).time_of(truth(b).best_config) / truth(m).best_time)
    s = np.array(slowdowns)
    second = markdown(["policy", "tunings for the stream", "geometric-mean slowdown vs exact-M tuning", "worst"],
                      [("key on exact M", len(exact), "1.000×", "1.00×"),
                       ("M bucketed to powers of two", len(bucketed), f"{np.exp(np.log(s).mean()):.3f}×",
                        f"{s.max():.2f}×")])
    return (first + f"\n\nM = 16's optimal config at M = 256: {slow16:.2f}× slower than M = 256's own "
            f"(lecture: 3.05×).\n\nA stream of {stream} random M values from 1 to 4096:\n\n" + second + "\n")


def main(argv=None):
    common.main(__doc__, "dynamic_m", lambda quick: run(200 if quick else 1000), argv)


if __name__ == "__main__":
    main()
