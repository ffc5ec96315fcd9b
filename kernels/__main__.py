"""Demo: run every library kernel on sample shapes under several configs and check the numbers.

`python -m kernels` (what `bin/demo` runs).  Each line: the kernel, the shape, how many configs
agree, the worst error against float64, and the worst disagreement between configs.
"""
from __future__ import annotations

import time

import numpy as np

from minitriton.testing import check_configs, accumulation_bound
from . import gemm, conv, rowsum, rowsoftmax

MATMUL_CONFIGS = [dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=g, SPLIT_K=s)
                  for bm, bn, bk, g, s in [(64, 64, 32, 8, 1), (16, 16, 16, 1, 1), (128, 32, 64, 4, 1),
                                           (32, 64, 32, 8, 4), (16, 32, 16, 2, 16), (64, 128, 64, 2, 2)]]


def _row(name, shape, res, seconds):
    err = max(e for e in res.max_abs_error)
    return f"| {name} | {shape} | {len(res.configs)} | {err:.3g} | {res.max_ulps_apart:.2f} | {seconds * 1e3 / len(res.configs):.0f} |"


def main():
    rng = np.random.default_rng(0)
    rows = ["| kernel | shape | configs | max error vs float64 | max ulps apart | ms per run (CPU) |",
            "|---|---|---|---|---|---|"]
    for M, N, K in [(200, 300, 100), (96, 80, 2048), (512, 512, 512)]:
        a = rng.standard_normal((M, K)).astype(np.float16)
        b = rng.standard_normal((K, N)).astype(np.float16)
        t = time.perf_counter()
        res = check_configs(lambda c: gemm.matmul(a, b, config=c), MATMUL_CONFIGS, gemm.reference(a, b),
                            abs_tol=accumulation_bound(a, b))
        rows.append(_row("matmul fp16", f"{M}×{N}×{K}", res, time.perf_counter() - t))
    x = rng.standard_normal((4, 28, 28, 16)).astype(np.float16)
    w = rng.standard_normal((3, 3, 16, 32)).astype(np.float16)
    absb = conv.reference(np.abs(x.astype(np.float64)), np.abs(w.astype(np.float64)), None, 1, 1)
    t = time.perf_counter()
    res = check_configs(lambda c: conv.conv2d(x, w, stride=1, padding=1, config=c), MATMUL_CONFIGS,
                        conv.reference(x, w, None, 1, 1), abs_tol=144 * 2.0 ** -24 * absb)
    rows.append(_row("conv2d fp16", "4×28×28×16 ⊛ 3×3×16×32", res, time.perf_counter() - t))
    x = rng.standard_normal((16, 200_000)).astype(np.float16)
    t = time.perf_counter()
    cfgs = [dict(BLOCK_N=1024, SPLIT=1), dict(BLOCK_N=256, SPLIT=8), dict(BLOCK_N=2048, SPLIT=32)]
    res = check_configs(lambda c: rowsum.row_sum(x, c), cfgs, rowsum.reference(x),
                        abs_tol=x.shape[1] * 2.0 ** -24 * np.abs(x.astype(np.float64)).sum(1))
    rows.append(_row("row sum fp16→fp32", "16×200000", res, time.perf_counter() - t))
    x = (rng.standard_normal((1000, 781)) * 3).astype(np.float16)
    t = time.perf_counter()
    ref = rowsoftmax.reference(x)
    res = check_configs(lambda c: rowsoftmax.softmax(x, c), [dict(ROWS=1), dict(ROWS=4), dict(ROWS=16)], ref,
                        abs_tol=4 * 781 * 2.0 ** -24 * ref)
    rows.append(_row("softmax fp16", "1000×781", res, time.perf_counter() - t))
    print("Every config of every kernel matches its float64 reference (fp16 rounding + fp32 accumulation bound)")
    print("and agrees with the other configs:\n")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
