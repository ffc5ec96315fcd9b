"""The peers, run here on a recorded landscape: Kernel Tuner 1.5's strategies in its simulation
mode, and Optuna's TPE sampler (the black-box optimiser most Python users would pick).

Each returns the same curve as ours (benchmarks.common.share_curve): after each unique
measurement, the best recorded mean time found so far as a share of the optimum, padded with its
last value when the search stops early.  Both need the optional `bench` extra
(`pip install -e '.[bench]'`); `available()` says which are installed.

How the peers see a file's restrictions: a config the file does not list broke the kernel's
restrictions, so it is no measurement.  Kernel Tuner is handed them as a restriction function
(its search space never holds them).  Optuna cannot be told a restriction before it samples, so
a listed config costs a measurement and an unlisted one is answered at once as a failure (the
slowest value) without counting, as a user's objective would; at most 50 proposals per
measurement are allowed, then the search ends where it is.
"""
from __future__ import annotations

import contextlib
import gzip
import io
import json
import logging
import pathlib
import random
import tempfile
import warnings

import numpy as np

# Kernel Tuner 1.5's search strategies that need no model of their own configuration (all but
# brute_force, and the wrappers of other libraries: skopt, pymoo, pyatf)
KERNEL_TUNER = ("genetic_algorithm", "pso", "simulated_annealing", "dual_annealing", "diff_evo", "mls",
                "greedy_mls", "greedy_ils", "ordered_greedy_mls", "firefly_algorithm", "basinhopping",
                "bayes_opt", "random_sample")
OPTUNA = ("optuna_tpe",)
PROPOSALS_PER_MEASUREMENT = 50


def available() -> dict:
    """{"kernel_tuner": version or None, "optuna": version or None}."""
    out = {}
    for name in ("kernel_tuner", "optuna"):
        try:
            out[name] = __import__(name).__version__
        except ImportError:
            out[name] = None
    return out


def _read(path: pathlib.Path) -> dict:
    return json.loads(gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_text())


def _time_of(entry) -> float:
    """An entry's recorded mean time in ms, or inf for a failed config."""
    t = entry.get("time")
    return float(t) if isinstance(t, (int, float)) and not isinstance(t, bool) and t > 0 else np.inf


def _curve(found_ms, best_s: float, budget: int) -> np.ndarray:
    """Share of the optimum after each unique measurement, from their recorded times (ms)."""
    running = np.minimum.accumulate(np.asarray(found_ms[:budget] or [np.inf], float)) / 1e3
    curve = np.where(np.isfinite(running), best_s / running, 0.0)
    return np.pad(curve, (0, budget - curve.size), mode="edge")


def kernel_tuner_curve(path: pathlib.Path, strategy: str, budget: int, seed: int, best: float) -> np.ndarray:
    import kernel_tuner
    doc = _read(path)
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
    seen, found = set(), []
    for r in results:
        point = tuple(r[k] for k in keys)
        if point not in seen:
            seen.add(point)
            found.append(_time_of(r))
    return _curve(found, best, budget)


def optuna_curve(path: pathlib.Path, budget: int, seed: int, best: float) -> np.ndarray:
    """Optuna's default TPE sampler, each parameter categorical (its values as the file lists them)."""
    import optuna
    doc = _read(path)
    keys, params = doc["tune_params_keys"], doc["tune_params"]
    listed = {tuple(e[k] for k in keys): _time_of(e) for e in doc["cache"].values()}
    slowest = max((t for t in listed.values() if np.isfinite(t)), default=1.0) * 10.0
    seen, found = {}, []

    def objective(trial):
        point = tuple(trial.suggest_categorical(k, params[k]) for k in keys)
        if point not in listed:
            return slowest                           # outside the space: no measurement
        if point not in seen:
            seen[point] = listed[point]
            found.append(listed[point])
        return seen[point] if np.isfinite(seen[point]) else slowest

    optuna.logging.set_verbosity(logging.ERROR)
    study = optuna.create_study(direction="minimize", sampler=optuna.samplers.TPESampler(seed=seed))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study.optimize(objective, n_trials=PROPOSALS_PER_MEASUREMENT * budget,
                       callbacks=[lambda st, tr: st.stop() if len(found) >= budget else None])
    return _curve(found, best, budget)


def peer_curve(path, peer: str, budget: int, seed: int, best: float) -> np.ndarray:
    if peer == "optuna_tpe":
        return optuna_curve(pathlib.Path(path), budget, seed, best)
    return kernel_tuner_curve(pathlib.Path(path), peer, budget, seed, best)
