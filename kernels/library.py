"""The library's numerical checks, as `python -m autotune verify matmul --shape ...` runs them:
random operands of the shape, a sample of configs HypoGPU can run there, every config's output
against the float64 reference (and each other) within the accumulation bound.

Registered with the `autotune` command line through the `minitriton.library` entry point
(setup.cfg), so the layer below learns of these kernels without importing this package."""
from __future__ import annotations

import numpy as np

from autotune.verify import MAX_BYTES, legal_configs
from minitriton.testing import check_configs, accumulation_bound
from . import gemm, rowsum, rowsoftmax


def _prepare(name, kernel, shape, n, seed):
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
    rng = np.random.default_rng(seed)
    configs = legal_configs(kernel, shape, n, rng)
    if not configs:
        raise ValueError(f"no config of {name} can run at {shape} on HypoGPU (every one sampled was refused)")
    return rng, configs


def _report(name, shape, configs, res):
    return (f"{name} {shape}: {len(configs)} configs agree (max {res.max_ulps_apart:.2f} ulps apart away from zero)\n\n"
            + res.table())


def check_matmul(shape, n=8, seed=0):
    rng, configs = _prepare("matmul", gemm.matmul, shape, n, seed)
    a = rng.standard_normal((shape["M"], shape["K"])).astype(np.float16)
    b = rng.standard_normal((shape["K"], shape["N"])).astype(np.float16)
    res = check_configs(lambda c: gemm.matmul(a, b, config=c), configs, gemm.reference(a, b),
                        abs_tol=accumulation_bound(a, b))
    return _report("matmul", shape, configs, res)


def check_row_sum(shape, n=8, seed=0):
    rng, configs = _prepare("row_sum", rowsum.row_sum, shape, n, seed)
    x = rng.standard_normal((shape["M"], shape["N"])).astype(np.float16)
    tol = shape["N"] * 2.0 ** -24 * np.abs(x.astype(np.float64)).sum(1)
    res = check_configs(lambda c: rowsum.row_sum(x, c), configs, rowsum.reference(x), abs_tol=tol)
    return _report("row_sum", shape, configs, res)


def check_softmax(shape, n=8, seed=0):
    rng, configs = _prepare("softmax", rowsoftmax.softmax, shape, n, seed)
    x = rng.standard_normal((shape["M"], shape["N"])).astype(np.float16)
    ref = rowsoftmax.reference(x)
    res = check_configs(lambda c: rowsoftmax.softmax(x, c), configs, ref, abs_tol=4 * shape["N"] * 2.0 ** -24 * ref)
    return _report("softmax", shape, configs, res)


CHECKS = {"matmul": check_matmul, "row_sum": check_row_sum, "softmax": check_softmax}
