"""Triton's tutorial kernels at shapes that do not fill their blocks, and three indexing kernels, against numpy.

The tutorials benchmark times shapes that are multiples of every block.  Users' shapes are not:
a softmax row of 781 in a block of 1024, a matmul of 1000 x 700 x 300 whose last tiles wrap
their rows with `% M` (tutorial 03), clamp them with `tl.where` (tutorial 09) or stop at a mask.
Here each kernel runs at such shapes (none of them chosen for the executor: the softmax and
layer-norm widths are Triton's own tutorial shapes, 1823 x 781) beside numpy in the same
process, with an embedding gather, a tiled transpose and a matmul that masks its edge tiles,
whose cost is in their addresses and masks.  No issue sets a goal for these; the table says
where the executor stands.
"""
from __future__ import annotations

import numpy as np

from benchmarks import common
from benchmarks.common import machine, markdown, median_time, warm_allocator
import minitriton as mt
from kernels.indexing import embedding, masked_matmul, transpose
from kernels.tutorials import layer_norm_fwd, matmul_kernel, matmul_persistent, softmax_row


def _softmax_np(x):
    e = np.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def cases(quick: bool):
    """(name, size, kernel run, numpy run, tolerance)."""
    rng = np.random.default_rng(0)
    out = []
    for rows, cols in ((1000, 781), (4096, 100)) if not quick else ((100, 781),):
        x = rng.standard_normal((rows, cols)).astype(np.float32)
        y = np.empty_like(x)
        block = 1 << (cols - 1).bit_length()
        out.append((f"fused softmax (tutorial 02), BLOCK {block}", f"{rows}x{cols}",
                    lambda x=x, y=y, rows=rows, cols=cols, block=block:
                    (softmax_row[(rows,)](y, x, cols, cols, BLOCK=block), y)[1],
                    lambda x=x: _softmax_np(x), 1e-6))
    rows, cols = (1823, 781) if not quick else (100, 781)
    ln_x = rng.standard_normal((rows, cols)).astype(np.float32)
    w, b = rng.standard_normal(cols).astype(np.float32), rng.standard_normal(cols).astype(np.float32)
    ln_y, mean, rstd = np.empty_like(ln_x), np.empty(rows, np.float32), np.empty(rows, np.float32)
    out.append(("layer norm forward (tutorial 05), BLOCK 1024", f"{rows}x{cols}",
                lambda: (layer_norm_fwd[(rows,)](ln_x, ln_y, w, b, mean, rstd, cols, cols, 1e-5, BLOCK_SIZE=1024),
                         ln_y)[1],
                lambda: (ln_x - ln_x.mean(1, keepdims=True)) / np.sqrt(ln_x.var(1, keepdims=True) + 1e-5) * w + b,
                1e-4))
    mms = ((1000, 700, 300, 64, 64, 32), (1000, 1000, 1024, 128, 128, 64)) if not quick else \
        ((100, 70, 30, 32, 32, 16),)
    for m, n, k, bm, bn, bk in mms:
        a16, b16 = rng.standard_normal((m, k)).astype(np.float16), rng.standard_normal((k, n)).astype(np.float16)
        a32, b32 = a16.astype(np.float32), b16.astype(np.float32)
        c = np.empty((m, n), np.float16)
        grid = (mt.cdiv(m, bm) * mt.cdiv(n, bn),)
        out.append((f"matmul (tutorial 03, {bm}x{bn}x{bk}, GROUP 8)", f"{m}x{n}x{k}",
                    lambda a16=a16, b16=b16, c=c, m=m, n=n, k=k, bm=bm, bn=bn, bk=bk, grid=grid:
                    (matmul_kernel[grid](a16, b16, c, m, n, k, k, 1, n, 1, n, 1, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn,
                                         BLOCK_SIZE_K=bk, GROUP_SIZE_M=8, ACTIVATION=""), c)[1],
                    lambda a32=a32, b32=b32: (a32 @ b32).astype(np.float16), 1e-2 * np.sqrt(k)))
    size = 1000 if not quick else 100
    p16, q16 = (rng.standard_normal((size, size)).astype(np.float16) for _ in range(2))
    p32, q32 = p16.astype(np.float32), q16.astype(np.float32)
    c_persistent = np.empty((size, size), np.float16)
    out.append(("persistent matmul (tutorial 09, 24 programs)", f"{size}^3",
                lambda: (matmul_persistent[(24,)](p16, q16, c_persistent, size, size, size, NUM_SMS=24, BM=128, BN=128,
                                                  BK=64), c_persistent)[1],
                lambda: (p32 @ q32).astype(np.float16), 1e-2 * np.sqrt(size)))
    m, n, k = (1000, 700, 300) if not quick else (100, 70, 30)
    a16, b16 = rng.standard_normal((m, k)).astype(np.float16), rng.standard_normal((k, n)).astype(np.float16)
    a32, b32 = a16.astype(np.float32), b16.astype(np.float32)
    c_masked = np.empty((m, n), np.float16)
    out.append(("matmul masking its edges, 64x64x32", f"{m}x{n}x{k}",
                lambda: (masked_matmul[(mt.cdiv(m, 64) * mt.cdiv(n, 64),)](a16, b16, c_masked, m, n, k, BM=64, BN=64,
                                                                            BK=32), c_masked)[1],
                lambda: (a32 @ b32).astype(np.float16), 1e-2 * np.sqrt(k)))
    vocab, n_ids, dim = (50000, 8192, 128) if not quick else (500, 300, 32)
    table = rng.standard_normal((vocab, dim)).astype(np.float32)
    ids = rng.integers(0, vocab, n_ids).astype(np.int32)
    gathered = np.empty((n_ids, dim), np.float32)
    out.append((f"embedding gather ({vocab} rows)", f"{n_ids}x{dim}",
                lambda: (embedding[(mt.cdiv(n_ids, 64),)](table, ids, gathered, n_ids, D=dim, BLOCK_ROWS=64),
                         gathered)[1],
                lambda: table[ids], 0))
    m, n = (1000, 700) if not quick else (100, 70)
    tx = rng.standard_normal((m, n)).astype(np.float32)
    xt = np.empty((n, m), np.float32)
    out.append(("transpose, 32x32 tiles", f"{m}x{n}",
                lambda: (transpose[(mt.cdiv(m, 32), mt.cdiv(n, 32))](tx, xt, m, n, BM=32, BN=32), xt)[1],
                lambda: np.ascontiguousarray(tx.T), 0))
    return out


def run(quick: bool):
    allocator = warm_allocator()
    repeats = 3 if quick else 15
    rows = []
    for name, size, kernel_fn, numpy_fn, tol in cases(quick):
        err = float(np.abs(np.asarray(kernel_fn(), np.float64) - np.asarray(numpy_fn(), np.float64)).max())
        t_k, t_np = [], []
        for _ in range(repeats):
            t_k.append(median_time(kernel_fn, 1, warmup=0))
            t_np.append(median_time(numpy_fn, 1, warmup=0))
        ratio = float(np.median(np.array(t_k) / np.array(t_np)))
        rows.append((name, size, f"{np.median(t_np) * 1e3:.2f}", f"{np.median(t_k) * 1e3:.2f}", f"**{ratio:.1f}×**",
                     f"{err:.1e}" + ("" if err <= tol else " (!)")))
    table = markdown(["kernel", "size", "numpy ms", "executor ms", "executor / numpy", "max abs error"], rows)
    return table + (f"\n\nMedians of {repeats} alternating runs on {machine()}; {allocator}. No issue sets goals "
                    f"for these shapes; errors are against numpy's answer (tolerances as in the tutorials table).\n")


def main(argv=None):
    common.main(__doc__, "ragged", run, argv)


if __name__ == "__main__":
    main()
