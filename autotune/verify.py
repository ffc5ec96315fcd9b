"""Numerical agreement of a library kernel across configs of its space (`python -m autotune verify`)."""
from __future__ import annotations

import numpy as np

from minitriton.testing import check_configs, accumulation_bound
from minitriton.hypogpu import Measurer
from .task import Task
from .space import Config
from .kernel_source import find_kernel

MAX_BYTES = 4 << 30  # arrays verify may allocate on the CPU
LIBRARY = ("matmul", "row_sum", "softmax")


def _legal(kernel, shape, n, rng):
    """n random configs of the kernel's space that compile on HypoGPU at this shape (asked the
    way a tuner asks: through the Measurer)."""
    task, measurer, out = Task(kernel, **shape), Measurer(), []
    for cfg in kernel.space.sample(rng, 20 * n):
        if measurer.measure(task, cfg).ok:
            out.append(cfg)
            if len(out) == n:
                break
    return out


def run(name: str, shape: dict, n: int = 8, seed: int = 0) -> str:
    import kernels
    rng = np.random.default_rng(seed)
    kernel = getattr(kernels, name)
    missing = [k for k in kernel.shape_keys if k not in shape]
    if missing:
        raise ValueError(f"--shape needs {list(kernel.shape_keys)}, missing {missing}")
    unknown = [k for k in shape if k not in kernel.shape_keys]
    if unknown:
        raise ValueError(f"--shape of {name} takes {list(kernel.shape_keys)}; {unknown} is not one of them")
    elements = shape["M"] * shape.get("K", shape.get("N", 1)) * 3
    if elements * 8 > MAX_BYTES:
        raise ValueError(f"--shape {shape} needs about {elements * 8 / 2**30:.0f} GiB of arrays to check on the CPU; "
                         f"verify works up to {MAX_BYTES / 2**30:.0f} GiB")
    configs = _legal(kernel, shape, n, rng)
    if not configs:
        raise ValueError(f"no config of {name} can run at {shape} on HypoGPU (every one sampled was refused)")
    if name == "matmul":
        a = rng.standard_normal((shape["M"], shape["K"])).astype(np.float16)
        b = rng.standard_normal((shape["K"], shape["N"])).astype(np.float16)
        from kernels.gemm import reference
        res = check_configs(lambda c: kernel(a, b, config=c), configs, reference(a, b), abs_tol=accumulation_bound(a, b))
    elif name == "row_sum":
        x = rng.standard_normal((shape["M"], shape["N"])).astype(np.float16)
        from kernels.rowsum import reference
        tol = shape["N"] * 2.0 ** -24 * np.abs(x.astype(np.float64)).sum(1)
        res = check_configs(lambda c: kernel(x, c), configs, reference(x), abs_tol=tol)
    else:
        x = rng.standard_normal((shape["M"], shape["N"])).astype(np.float16)
        from kernels.rowsoftmax import reference
        ref = reference(x)
        res = check_configs(lambda c: kernel(x, c), configs, ref, abs_tol=4 * shape["N"] * 2.0 ** -24 * ref)
    return (f"{name} {shape}: {len(configs)} configs agree (max {res.max_ulps_apart:.2f} ulps apart away from zero)\n\n"
            + res.table())


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
