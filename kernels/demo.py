"""The demo (`python -m autotune demo`, the README's first command).

It lives with the kernels, not in `autotune/`: it scores the tuners with the oracle, which
nothing under `autotune/` may touch.

Tunes the library matmul on the lecture's five GEMM shapes on HypoGPU with three tuners that
a Triton user meets (Triton's hand-written 24-config list tried exhaustively, random search
and Ansor over the full 157,500-config space), scores the config each one chose by its true
time from the oracle, then runs every chosen config on the CPU and checks the numbers.  Each
row is printed as soon as its shape is tuned, and the closing lines say what the table shows,
computed from the table itself (where Ansor trails, it says so and why).
"""
from __future__ import annotations

import numpy as np

import kernels
from kernels.gemm import reference
from kernels.shapes import SHAPES, LECTURE_FIVE, ROLES, triton_list
from minitriton.hypogpu import oracle
from minitriton.testing import check_configs, accumulation_bound
from autotune import Task, tune


def main(quick: bool = False):
    budget = 64 if quick else 256
    space = Task(kernels.matmul, **SHAPES[LECTURE_FIVE[0]]).space
    print(f"minitriton demo: tuning the library matmul (C = A @ B, fp16) on HypoGPU, a simulated A100.\n"
          f"Its search space: {space.size:,} configs (BLOCK_M/N/K, warps, stages, GROUP_M, SPLIT_K).\n"
          f"Three tuners per shape, each scored by the true time of the config it chose:\n"
          f"  list    Triton's usual 24-config list, every config measured (no split-K in it)\n"
          f"  random  {budget} configs drawn at random from the whole space\n"
          f"  Ansor   {budget} measurements steered by a learned cost model (lecture §5)"
          f"{'; --quick: a quarter of the full budget' if quick else ''}\n\n"
          f"The five shapes of the lecture:")
    for name in LECTURE_FIVE:
        s = SHAPES[name]
        print(f"  {name:<12} {s['M']}x{s['N']}x{s['K']}: {ROLES[name]}")
    print("\n| shape | list | random | Ansor | Ansor's simulated tuning time | optimum |\n|---|---|---|---|---|---|",
          flush=True)
    chosen, shares = [], {}
    for name in LECTURE_FIVE:
        task = Task(kernels.matmul, **SHAPES[name])
        truth = oracle(task)
        results = {"list": tune(task, "exhaustive", configs=triton_list(), seed=0),
                   "random": tune(task, "random", budget=budget, seed=0),
                   "Ansor": tune(task, "ansor", budget=budget, seed=0)}
        shares[name] = {k: truth.best_time / truth.time_of(r.best_config) for k, r in results.items()}
        shares[name]["Ansor measured"] = max(truth.best_time / truth.time_of(m.config)
                                             for m in results["Ansor"].history if m.ok)
        chosen += [r.best_config for r in results.values()]
        cells = " | ".join(f"{shares[name][k]:.1%}" for k in results)
        print(f"| {name} | {cells} | {results['Ansor'].simulated_seconds / 60:.1f} min | "
              f"{truth.best_time * 1e6:.1f} µs |", flush=True)
    print("\n(% = the optimum's time / the chosen config's true time: 100 % is the best config in the space.)")
    print(_reading(shares, budget, space.size, quick))
    rng = np.random.default_rng(0)
    a = rng.standard_normal((200, 100)).astype(np.float16)
    b = rng.standard_normal((100, 300)).astype(np.float16)
    unique = list(dict.fromkeys(chosen))
    res = check_configs(lambda c: kernels.matmul(a, b, config=c), unique, reference(a, b),
                        abs_tol=accumulation_bound(a, b))
    print(f"\nThe {len(unique)} distinct chosen configs, run on the CPU at 200x300x100 (fp16): every result is "
          f"within fp16 rounding of the float64 reference (max error {max(res.max_abs_error):.3g}), and the "
          f"configs agree to {res.max_ulps_apart:.0f} ulp.")


def _reading(shares, budget, size, quick) -> str:
    """What the table says, from its own numbers."""
    far = [n for n, s in shares.items() if s["list"] < 0.8]
    behind = [n for n, s in shares.items() if s["Ansor"] < max(s["list"], s["random"]) - 0.005]
    lines = []
    if far:
        lines.append(f"The list is far from the optimum on {', '.join(far)}: its 24 configs were written for large "
                     f"square GEMMs and hold no split-K or small tiles.")
    if behind:
        noisy = [n for n in behind   # it measured a config that would not trail, and chose another
                 if shares[n]["Ansor measured"] >= max(shares[n]["list"], shares[n]["random"]) - 0.005]
        model = [n for n in behind if n not in noisy]
        if noisy:
            lines.append("Ansor trails another tuner on " + ", ".join(
                f"{n} (it measured a config at {shares[n]['Ansor measured']:.1%} but chose one at "
                f"{shares[n]['Ansor']:.1%})" for n in noisy) + ": measurements are noisy, and the config whose "
                f"single fastest sample was lowest won although its true time is not.")
        if model:
            lines.append(f"Ansor trails another tuner on {', '.join(model)}: {budget} measurements are "
                         f"{budget / size:.2%} of the space, and with this seed its model had not yet led it to "
                         f"configs as good as the list's hand-picked ones" +
                         (" (run without --quick for 256)" if quick else "") + ".")
        lines.append("One tuning varies with its seed: bin/python -m benchmarks.ansor_compare gives medians over seeds.")
    else:
        lines.append(f"Ansor is at or above the other two on every shape after {budget} measurements.")
    return "\n".join(lines)
