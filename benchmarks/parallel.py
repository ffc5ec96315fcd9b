"""Issue 14: measuring in parallel.

A matmul written the README's way (no stated launch profile: HypoGPU traces every config's
launch) is tuned at 2048^3 with 256 measurements, measured in-process (1 process), by 2 local
processes and by a local Ray cluster of 2 workers; the wall times are compared in one process,
and the chosen config must be the same every time (the same seed gives the same records
whatever the pool).  Then `devices=1, 4, 16`: the simulated time of a 1,024-measurement tuning
of the library matmul (square), where N simulated GPUs share each batch.
Goals: 2 local processes <= 0.6x the wall time of 1 on this 2-core machine; Ray within 1.3x of
local processes; simulated time falling in proportion to `devices`.
"""
from __future__ import annotations

import time

import numpy as np

import kernels
import minitriton as mt
import minitriton.language as tl
from autotune import Space, Task, tune
from benchmarks import common
from benchmarks.common import machine, markdown
from kernels.shapes import SHAPES


@mt.jit
def user_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)
    for k in range(0, K, BLOCK_K):
        ks = k + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.)
        b = tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc.to(tl.float16), mask=(rows[:, None] < M) & (cols[None, :] < N))


def traced_task(n):
    a = np.zeros((n, n), np.float16)
    b, c = np.zeros_like(a), np.zeros_like(a)
    space = Space(BLOCK_M=[32, 64, 128, 256], BLOCK_N=[32, 64, 128, 256], BLOCK_K=[16, 32, 64],
                  num_warps=[2, 4, 8], num_stages=[2, 3, 4, 5])

    def launch(cfg):
        kw = cfg.all_kwargs()
        user_matmul[(mt.cdiv(n, kw["BLOCK_M"]), mt.cdiv(n, kw["BLOCK_N"]))](a, b, c, n, n, n, **kw)
    return Task(user_matmul, space=space, launch=launch, name=f"user_matmul({n}^3)")


def _ray_available() -> bool:
    try:
        import ray  # noqa: F401
        return True
    except ImportError:
        return False


def run(quick: bool) -> str:
    n, budget = (512, 48) if quick else (2048, 256)
    rows, walls, chosen, simulated = [], {}, {}, {}
    pools = [("in-process (1 process)", 1), ("2 local processes", 2)]
    if _ray_available():
        import ray
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
        ray.get([ray.remote(lambda: None).remote() for _ in range(4)])   # a running cluster: its 2 workers up
        pools.append(("local Ray cluster, 2 workers", "ray"))
    # in-process once; the parallel pools alternately, twice each (median), so that drift of the
    # machine's speed does not decide the comparison between them
    order = [pools[0]] + [p for _ in range(1 if quick else 2) for p in pools[1:]]
    times = {label: [] for label, _ in pools}
    for label, parallel in order:
        t = time.perf_counter()
        result = tune(traced_task(n), "random", budget=budget, seed=0, parallel=parallel, progress=False)
        times[label].append(time.perf_counter() - t)
        chosen.setdefault(label, set()).add(str(result.best_config))
        simulated[label] = result.simulated_seconds
    if _ray_available():
        import ray
        ray.shutdown()
    for label, _ in pools:
        walls[label] = float(np.median(times[label]))
        rows.append([label, f"{walls[label]:.1f}", f"{walls[label] / walls[pools[0][0]]:.2f}",
                     " / ".join(sorted(chosen[label])), f"{simulated[label]:.0f}"])
    text = markdown(["pool", "wall s", "vs 1 process", "chosen config", "simulated s"], rows)
    text += (f"\n\nTraced matmul at {n}^3, {budget} measurements (random search, seed 0): the wall time is "
             f"tracing each config's launch and timing it on HypoGPU; the parallel pools ran alternately, "
             f"{len(times[pools[1][0]])} times each (median).\n\n")
    task = Task(kernels.matmul, **SHAPES["square"])
    sims, drows = {}, []
    for d in (1, 4, 16):
        r = tune(task, "random", budget=256 if quick else 1024, seed=0, devices=d, progress=False)
        sims[d] = r.simulated_seconds
        drows.append([d, f"{sims[d]:.0f}", f"{sims[1] / sims[d]:.2f}"])
    text += markdown(["simulated GPUs (devices=)", "simulated s", "speed-up"], drows)
    two = walls["2 local processes"] / walls[pools[0][0]]
    goals = [f"2 local processes {two:.2f}x the wall time of 1 (goal <= 0.6: {'met' if two <= 0.6 else 'missed'})"]
    if "local Ray cluster, 2 workers" in walls:
        ray_ratio = walls["local Ray cluster, 2 workers"] / walls["2 local processes"]
        goals.append(f"Ray {ray_ratio:.2f}x local processes (goal <= 1.3: {'met' if ray_ratio <= 1.3 else 'missed'})")
    else:
        goals.append("Ray not installed (pip install -e '.[ray]'): not measured")
    same = len(set().union(*chosen.values())) == 1
    goals.append(f"the same chosen config with every pool: {'met' if same else 'missed'}")
    prop = all(abs(sims[1] / sims[d] - d) / d <= 0.1 for d in (4, 16))
    goals.append(f"simulated time falls in proportion to devices (within 10 %): {'met' if prop else 'missed'}")
    return text + "\n\nGoals: " + "; ".join(goals) + f".\n\nOn {machine()}.\n"


def main(argv=None):
    common.main(__doc__, "parallel", run, argv)


if __name__ == "__main__":
    main()
