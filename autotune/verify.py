"""Numerical agreement of a library kernel across configs of its space (`python -m autotune verify`)."""
from __future__ import annotations

import importlib.metadata
import inspect
import os

import numpy as np

from minitriton.hypogpu import Measurer
from .task import Task
from .space import Config
from .kernel_source import find_kernel, source_digest, source_of
from .records import latest_per_config

MAX_BYTES = 4 << 30  # arrays verify may allocate on the CPU


def legal_configs(kernel, shape, n, rng):
    """n random configs of the kernel's space that compile on HypoGPU at this shape (asked the
    way a tuner asks: through the Measurer)."""
    task, measurer, out = Task(kernel, **shape), Measurer(), []
    for cfg in kernel.space.sample(rng, 20 * n):
        if measurer.measure(task, cfg).ok:
            out.append(cfg)
            if len(out) == n:
                break
    return out


def library_checks() -> dict:
    """name -> check(shape, n, seed) -> text, for the kernel libraries installed: each registers
    itself (the `minitriton.library` entry point of its package, e.g. kernels.library:CHECKS),
    so this layer learns of the library kernels without importing the package above it."""
    checks = {}
    for ep in importlib.metadata.entry_points(group="minitriton.library"):
        checks.update(ep.load())
    return checks


def library_demo():
    """The demo the installed kernel library provides (its `minitriton.demo` entry point)."""
    found = list(importlib.metadata.entry_points(group="minitriton.demo"))
    if not found:
        raise ValueError("no kernel library with a demo is installed (pip install -e . installs kernels/)")
    return found[0].load()


def run(name: str, shape: dict, n: int = 8, seed: int = 0) -> str:
    checks = library_checks()
    if name not in checks:
        raise ValueError(f"no library kernel {name!r} is installed (known: {sorted(checks)})")
    return checks[name](shape, n, seed)


# ---------------------------------------------------------------- @autotune(verify=...)
def _tolerance(expected: np.ndarray, atol, rtol):
    """The library's rule when none is given: a few output ulps, relative and scaled by the
    array's largest magnitude (summation order changes with the config, near zero too)."""
    eps = float(np.finfo(expected.dtype).eps) if expected.dtype.kind == "f" else 0.0
    if rtol is None:
        rtol = 8 * eps
    if atol is None:
        atol = 8 * eps * float(np.max(np.abs(expected.astype(np.float64)))) if expected.size else 0.0
    return atol, rtol


def _disagreement(got: dict, want: dict, atol, rtol):
    """None when every array agrees, else (name, index, got, expected, allowed) of the worst."""
    for name, w in want.items():
        g = got[name]
        if g.shape != w.shape:
            return name, None, g.shape, w.shape, None
        a, r = _tolerance(w, atol, rtol)
        w64, g64 = w.astype(np.float64), g.astype(np.float64)
        allowed = a + r * np.abs(w64)
        diff = np.abs(g64 - w64)
        bad = ~(diff <= allowed) & ~(np.isnan(g64) & np.isnan(w64))
        if bad.any():
            idx = tuple(int(i) for i in np.unravel_index(int(np.argmax(np.where(bad, diff - allowed, -np.inf))),
                                                         diff.shape))
            return name, idx, float(g64[idx]), float(w64[idx]), float(allowed[idx])
    return None


def check_answers(run, configs, args: dict, reference=None, atol=None, rtol=None):
    """Run each config on copies of `args` (`run(config, args)` launches it) and keep those whose
    output arrays agree: with `reference(args) -> {name: expected}`, or else with the largest
    group of configs that agree with each other.  Returns (agreeing configs in the order given,
    [(config, why)] for those dropped)."""
    outputs = []
    for cfg in configs:
        copies = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in args.items()}
        run(cfg, copies)
        outputs.append({k: v for k, v in copies.items() if isinstance(v, np.ndarray)})
    dropped = []
    if reference is not None:
        want = {k: np.asarray(v) for k, v in reference({k: (v.copy() if isinstance(v, np.ndarray) else v)
                                                         for k, v in args.items()}).items()}
        keep = []
        for cfg, out in zip(configs, outputs):
            why = _disagreement({k: out[k] for k in want}, want, atol, rtol)
            (dropped.append((cfg, _explain(why, "the reference"))) if why else keep.append(cfg))
        return keep, dropped
    groups = []  # configs whose outputs agree with the group's first
    for i, out in enumerate(outputs):
        for g in groups:
            if _disagreement(out, outputs[g[0]], atol, rtol) is None:
                g.append(i)
                break
        else:
            groups.append([i])
    best = max(groups, key=len)
    if len(groups) > 1 and sum(len(g) == len(best) for g in groups) > 1:
        raise AssertionError(f"configs disagree and no majority decides: {[ [str(configs[i]) for i in g] for g in groups]}"
                             f"; give verify=<reference function> to say which is right")
    for g in groups:
        if g is not best:
            for i in g:
                why = _disagreement(outputs[i], outputs[best[0]], atol, rtol)
                dropped.append((configs[i], _explain(why, f"{len(best)} other config(s)")))
    return [configs[i] for i in sorted(best)], dropped


def _explain(why, against):
    name, idx, got, want, allowed = why
    if idx is None:
        return f"'{name}' has shape {got}, {against} give {want}"
    return (f"'{name}' at index {idx}: {got!r} where {against} give {want!r} "
            f"({abs(got - want):.3g} apart > allowed {allowed:.3g}; atol=/rtol= change the tolerance)")


def call_record(autotuner, all_args: dict, grid, history, top=5):
    """How to call a decorated kernel again (`python -m autotune verify KEY`, run_entry below):
    where it lives, each argument (arrays by shape and dtype, scalars by value) and the grid of
    the fastest configs of `history`; None when an argument or a grid cannot be written down."""
    fn = autotuner
    while hasattr(fn, "fn") and not hasattr(fn, "cache_key"):
        fn = fn.fn
    args = {}
    for k in autotuner.arg_names:
        if k not in all_args:
            continue  # a meta-parameter the configs supply
        v = all_args[k]
        if hasattr(v, "shape") and hasattr(v, "dtype"):
            args[k] = {"shape": list(v.shape), "dtype": str(v.dtype)}
        elif isinstance(v, (bool, int, float, str)) or v is None:
            args[k] = {"value": v}
        else:
            return None  # an argument that cannot be written down: no re-run from the cache
    grids = []
    for r in sorted((r for r in latest_per_config(history) if r.ok), key=lambda r: r.time)[:top]:
        try:  # (a grid may need meta-parameters that @heuristics adds at launch: then no record)
            g = grid(dict(all_args, **r.config.all_kwargs())) if callable(grid) else grid
            g = (g,) if isinstance(g, int) else tuple(int(x) for x in g)
        except (KeyError, TypeError, ValueError):
            return None
        grids.append({"kwargs": r.config.kwargs, "num_warps": r.config.num_warps,
                      "num_stages": r.config.num_stages, "grid": list(g)})
    raw = getattr(fn, "fn", fn)
    try:
        where = inspect.getsourcefile(raw)
    except TypeError:
        where = None
    return {"module": getattr(fn, "__module__", None), "name": getattr(raw, "__qualname__", None),
            "file": os.path.abspath(where) if where else None, "source_sha256": source_digest(source_of(fn)),
            "decorated": autotuner.__name__, "args": args, "configs": grids}


def run_entry(entry: dict, records: list, n: int = 8, seed: int = 0, origin: str | None = None) -> str:
    """Re-run a cached entry's kernel (a user kernel too) on random arguments of the recorded
    shapes and dtypes under its fastest configs, and check that they agree.  `origin`: the
    script or module the user says defines it (kernel_source.find_kernel checks it first)."""
    call = entry.get("call")
    kernel = find_kernel(call, origin)
    rng = np.random.default_rng(seed)
    args = {}
    for name, a in call["args"].items():
        if "value" in a:
            args[name] = a["value"]
            continue
        dt = np.dtype(a["dtype"]) if a["dtype"] != "bfloat16" else None
        if dt is None or int(np.prod(a["shape"])) * dt.itemsize > MAX_BYTES:
            raise ValueError(f"argument '{name}' ({a['shape']} {a['dtype']}) cannot be rebuilt here")
        # floats random; integers zero (they may be indices, and 0 is valid for any of them)
        args[name] = (rng.standard_normal(a["shape"]).astype(dt) if dt.kind == "f" else np.zeros(a["shape"], dt))
    configs = [(Config(c["kwargs"], num_warps=c["num_warps"], num_stages=c["num_stages"]), tuple(c["grid"]))
               for c in call["configs"][:n]]
    if len(configs) < 2:
        raise ValueError("the entry recorded fewer than two configs that ran: nothing to compare")
    grids = dict(configs)

    def run(cfg, copies):
        kernel[grids[cfg]](**copies, **cfg.all_kwargs())
    keep, dropped = check_answers(run, [c for c, _ in configs], args)
    lines = [f"{entry['kernel']}{entry['args']}: {len(keep)} of {len(configs)} configs agree"]
    lines += [f"  agrees:   {c}" for c in keep] + [f"  DIFFERS:  {c}: {why}" for c, why in dropped]
    return "\n".join(lines)
