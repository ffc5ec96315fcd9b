"""Issue 12 (optional): Kernel Tuner 1.5's strategies and ours, side by side in one run.

Kernel Tuner replays each cache file in its simulation mode; our default tuner for the space
(autotune.tuners.default_tuner: bayes_ansor for the recorded files, Ansor for HypoGPU's 157,500-point
landscapes) and Ansor replay it on the Replay device.  For each, the best recorded mean time found as % of
the optimum after 25, 50, 100, 200 and 400 unique measurements (median of the seeds).  Run on
the three datasets and on HypoGPU's exported landscapes of wgrad and small.  Needs Kernel Tuner
(`pip install kernel_tuner==1.5.0`, an optional extra of the benchmarks: `pip install -e .[bench]`);
without it the benchmark says so and stops.
"""
from __future__ import annotations

import contextlib
import gzip
import io
import json
import pathlib
import random
import tempfile
import warnings

import numpy as np

from benchmarks import common
from benchmarks.common import markdown, machine, share_curve

BUDGETS = (25, 50, 100, 200, 400)
STRATEGIES = ("genetic_algorithm", "pso", "simulated_annealing", "dual_annealing", "diff_evo", "random_sample")


def kernel_tuner_curve(path: pathlib.Path, strategy: str, budget: int, seed: int, best: float) -> np.ndarray:
    """Kernel Tuner's best-so-far curve (share of the optimum) over its unique evaluations."""
    import kernel_tuner
    doc = json.loads(gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_text())
    keys = doc["tune_params_keys"]
    present = {tuple(e[k] for k in keys) for e in doc["cache"].values()}

    def in_file(params):  # a config absent from the file broke the kernel's restrictions
        return tuple(params[k] for k in keys) in present
    with tempfile.TemporaryDirectory() as tmp:
        cache = pathlib.Path(tmp) / "cache.json"
        cache.write_text(json.dumps(doc))           # Kernel Tuner writes to its cache: work on a copy
        random.seed(seed)
        np.random.seed(seed)
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            results, _ = kernel_tuner.tune_kernel(doc["kernel_name"], "__global__ void k() {}", doc["problem_size"],
                                                  [], doc["tune_params"], restrictions=in_file,
                                                  simulation_mode=True, cache=str(cache),
                                                  strategy=strategy, strategy_options={"max_fevals": budget},
                                                  verbose=False, quiet=True)
    seen, found, curve = set(), np.inf, []
    for r in results:
        point = tuple(r[k] for k in keys)
        if point in seen:
            continue
        seen.add(point)
        t = r.get("time")
        if isinstance(t, (int, float)) and not isinstance(t, bool) and t > 0:
            found = min(found, t / 1e3)
        curve.append(best / found if np.isfinite(found) else 0.0)
    curve = np.array(curve[:budget] or [0.0])
    return np.pad(curve, (0, budget - curve.size), mode="edge")


def _landscapes(tmp: pathlib.Path):
    import kernels
    from kernels.shapes import SHAPES
    from autotune import Task
    from minitriton.replay import export_cache
    out = [(p.name.split(".json")[0], p) for p in common.datasets()[0]]
    for name in ("wgrad", "small"):
        task = Task(kernels.matmul, **SHAPES[name])
        out.append((f"HypoGPU {name}", export_cache(tmp / f"{name}.json", task, kernel_name=f"matmul_{name}")))
    return out


def run(quick: bool) -> str:
    try:
        import kernel_tuner  # noqa: F401
    except ImportError:
        return "Kernel Tuner is not installed (`pip install -e .[bench]`): nothing was run.\n"
    from minitriton.replay import Replay
    from minitriton.hypogpu import oracle
    budget = 100 if quick else 400
    seeds = range(3 if quick else 10)
    rows, behind = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in _landscapes(pathlib.Path(tmp)):
            task = Replay(path).task()
            truth = oracle(task)
            curves = {}
            for strategy in STRATEGIES:
                curves[strategy] = np.median([kernel_tuner_curve(path, strategy, budget, s, truth.best_time)
                                              for s in seeds], axis=0)
            from autotune.tuners import default_tuner
            default = default_tuner(task, task.space)
            ours = f"ours: {default} (default)"
            for tuner, label in [(default, ours)] + ([("ansor", "ours: ansor")] if default != "ansor" else []):
                curves[label] = np.median([share_curve(task, tuner, budget, s, truth)[0] for s in seeds], axis=0)
            for label, c in curves.items():
                rows.append([name, label, *(f"{100 * c[b - 1]:.1f}" for b in BUDGETS if b <= budget)])
            for b in BUDGETS:
                if b <= budget:
                    kt_best = max(curves[s][b - 1] for s in STRATEGIES)
                    if round(100 * curves[ours][b - 1], 1) < round(100 * kt_best, 1):
                        behind.append(f"{name} after {b}")
    verdict = "Our default at or above Kernel Tuner's best strategy everywhere." if not behind else \
        "Our default behind Kernel Tuner's best strategy on " + ", ".join(behind) + "."
    return (markdown(["landscape", "tuner", *(f"% after {b}" for b in BUDGETS if b <= budget)], rows) +
            f"\n\nMedian of {len(seeds)} seeds on {common.datasets()[1]}; Kernel Tuner {__import__('kernel_tuner').__version__} in simulation "
            f"mode; on {machine()}.\n\n{verdict}\n")


def main(argv=None):
    common.main(__doc__, "kernel_tuner_side", run, argv)


if __name__ == "__main__":
    main()
