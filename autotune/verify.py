"""Numerical agreement of a library kernel across configs of its space (`python -m autotune verify`)."""
from __future__ import annotations

import numpy as np

from minitriton.testing import check_configs, accumulation_bound
from minitriton.hypogpu import Measurer
from .task import Task

MAX_BYTES = 4 << 30  # arrays verify may allocate on the CPU


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
