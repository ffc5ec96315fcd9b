"""What a cached @autotune call costs on top of launching the kernel directly.

The launch itself (the CPU executor) is swapped for a no-op in both paths, so the difference
is the decorator's own work: building the key, bucketing M, looking it up, merging the best
config's meta-parameters.  Goal (issue 4): under 20 µs.
"""
from __future__ import annotations

import tempfile
import time

import numpy as np

import minitriton as mt
import minitriton.language as tl
from autotune import autotune, Config
from benchmarks import common
from benchmarks.common import markdown


@mt.jit
def axpy(x_ptr, y_ptr, out_ptr, M, N, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < M * N
    tl.store(out_ptr + offs, alpha * tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


class NoLaunch:
    """Stands in for the kernel: same interface, does nothing."""
    arg_names = axpy.arg_names
    __name__ = "axpy"

    def run(self, *args, grid, **kwargs):
        return None


def per_call(fn, n):
    fn()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t) / n


def run(quick):
    n = 20_000 if quick else 200_000
    x = np.ones(4096, np.float32)
    y, out = np.ones_like(x), np.empty_like(x)
    grid = lambda meta: (mt.cdiv(4096, meta["BLOCK"]),)
    with tempfile.TemporaryDirectory() as cache:
        tuned = autotune(configs=[Config({"BLOCK": b}, num_warps=w) for b in (256, 1024) for w in (4, 8)],
                         key=["M", "N"], cache_dir=cache)(axpy)
        tuned[grid](x, y, out, 64, 64, 2.0)                      # tunes once
        best = tuned.best_config.all_kwargs()
        real_direct = per_call(lambda: axpy[grid](x, y, out, 64, 64, 2.0, **best), n // 200)
        real_tuned = per_call(lambda: tuned[grid](x, y, out, 64, 64, 2.0), n // 200)
        stub = NoLaunch()
        tuned.fn = stub
        direct = per_call(lambda: stub.run(x, y, out, 64, 64, 2.0, grid=grid, **best), n)
        cached = per_call(lambda: tuned.run(x, y, out, 64, 64, 2.0, grid=grid), n)
        via_getitem = per_call(lambda: tuned[grid](x, y, out, 64, 64, 2.0), n)
    rows = [("launcher called directly (no-op launch)", f"{direct * 1e6:.2f}"),
            ("cached @autotune call, .run (no-op launch)", f"{cached * 1e6:.2f}"),
            ("cached @autotune call, kernel[grid](...) (no-op launch)", f"{via_getitem * 1e6:.2f}"),
            ("**dispatch overhead** (goal < 20 µs)", f"**{(via_getitem - direct) * 1e6:.2f}**"),
            ("for scale: a real 4096-element launch on the CPU executor, direct", f"{real_direct * 1e6:.0f}"),
            ("for scale: the same through the cached decorator", f"{real_tuned * 1e6:.0f}")]
    return markdown(["call", "µs per call"], rows) + f"\n\n{n:,} calls each.\n"


def main(argv=None):
    common.main(__doc__, "dispatch", run, argv)


if __name__ == "__main__":
    main()
