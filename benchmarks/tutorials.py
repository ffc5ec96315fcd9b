"""Triton's tutorial kernels at realistic sizes on the CPU executor, against numpy.

Each kernel is written the way Triton's tutorials write it (our own code), run by the
executor, checked against an equivalent numpy computation, and timed against it in the same
process (medians of alternating runs).  The table also says which path each launch took:
lockstep (divergent control flow under masks included) or one program at a time.
Goals: every kernel within 3x of numpy, none one program at a time (issue 7); within 1.5x (issue 28).
"""
from __future__ import annotations

import numpy as np

import minitriton as mt
from benchmarks import common
from benchmarks.common import machine, markdown, median_time, warm_allocator
from kernels.tutorials import (add_kernel, asin_kernel, attention_fwd, grouped_gemm, layer_norm_dw, layer_norm_fwd,
                               matmul_kernel, matmul_persistent, seeded_dropout, softmax_persistent, softmax_row)
from minitriton import compat, expressions


def _softmax_np(x):
    e = np.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def _attention_np(q, k, v, scale, causal):
    q32, k32, v32 = q.astype(np.float32), k.astype(np.float32), v.astype(np.float32)
    s = q32 @ k32.transpose(0, 2, 1) * scale
    if causal:
        t = s.shape[-1]
        s = np.where(np.tril(np.ones((t, t), bool)), s, -np.inf)
    return (_softmax_rows(s) @ v32).astype(np.float16)


def _softmax_rows(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def cases(quick):
    """(name, size, run kernel -> output, numpy -> output, tolerance, kernel[, error of the
    kernel's output]): the error is the largest difference from numpy's output unless the case
    says how to judge it (dropout: numpy draws other random numbers than Triton's Philox)."""
    rng = np.random.default_rng(0)
    out = []
    n = 1 << (20 if quick else 24)
    x, y = rng.random(n, np.float32), rng.random(n, np.float32)
    z = np.empty_like(x)
    out.append(("vector add", f"2^{n.bit_length() - 1}",
                lambda: (add_kernel[(mt.cdiv(n, 1024),)](x, y, z, n, BLOCK=1024), z)[1], lambda: x + y, 0, add_kernel))
    p, seed = 0.5, 123

    def dropout_error(got):
        """The kept values exact and the kept share within 1e-3 of 1 - p (8 standard deviations
        at 2^24 draws), or infinite."""
        kept = got != 0
        share_ok = abs(kept.mean() - (1 - p)) < 1e-3
        return float(np.abs(got[kept] - x[kept] / np.float32(1 - p)).max()) if share_ok else np.inf
    out.append(("dropout (tutorial 04, seeded)", f"2^{n.bit_length() - 1}",
                lambda: (seeded_dropout[(mt.cdiv(n, 1024),)](x, z, n, p, seed, BLOCK=1024), z)[1],
                lambda: np.where(np.random.default_rng(seed).random(n, np.float32) > p, x / np.float32(1 - p),
                                 np.float32(0)),
                0, seeded_dropout, dropout_error))
    u = x * 2 - 1
    out.append(("asin (tutorial 07, libdevice)", f"2^{n.bit_length() - 1}",
                lambda: (asin_kernel[(mt.cdiv(n, 1024),)](u, z, n, BLOCK=1024), z)[1], lambda: np.arcsin(u), 0,
                asin_kernel))
    rows, cols = (1024 if quick else 4096), 1024
    s = rng.standard_normal((rows, cols)).astype(np.float32)
    so = np.empty_like(s)
    out.append(("fused softmax, a program per row", f"{rows}x{cols}",
                lambda: (softmax_row[(rows,)](so, s, cols, cols, BLOCK=1024), so)[1], lambda: _softmax_np(s), 1e-6,
                softmax_row))
    out.append(("fused softmax, persistent (P=96)", f"{rows}x{cols}",
                lambda: (softmax_persistent[(96,)](so, s, cols, cols, rows, cols, BLOCK_SIZE=1024, num_stages=2),
                                 so)[1],
                lambda: _softmax_np(s), 1e-6, softmax_persistent))
    w, b = rng.standard_normal(cols).astype(np.float32), rng.standard_normal(cols).astype(np.float32)
    ln, ln_mean, ln_rstd = np.empty_like(s), np.empty(rows, np.float32), np.empty(rows, np.float32)

    def ln_np():
        mu, var = s.mean(1, keepdims=True), s.var(1, keepdims=True)
        return (s - mu) / np.sqrt(var + 1e-5) * w + b
    out.append(("layer norm forward", f"{rows}x{cols}",
                lambda: (layer_norm_fwd[(rows,)](s, ln, w, b, ln_mean, ln_rstd, cols, cols, 1e-5, BLOCK_SIZE=256),
                         ln)[1], ln_np, 1e-4,
                layer_norm_fwd))
    dy = rng.standard_normal((rows, cols)).astype(np.float32)
    mean, rstd = s.mean(1).astype(np.float32), (1 / np.sqrt(s.var(1) + 1e-5)).astype(np.float32)
    group = 64

    def dw_kernel():
        dw, lock, count = np.zeros((group, cols), np.float32), np.zeros(group, np.int32), np.zeros(group, np.int32)
        layer_norm_dw[(rows,)](dy, s, mean, rstd, dw, lock, count, cols, cols, GROUP=group, BLOCK=1024)
        return dw.sum(0)
    out.append(("layer norm backward (dW, locked)", f"{rows}x{cols}", dw_kernel,
                lambda: (dy * (s - mean[:, None]) * rstd[:, None]).sum(0), 1e-2, layer_norm_dw))
    heads, t, d = 4, (256 if quick else 1024), 64
    q, k, v = (rng.standard_normal((heads, t, d)).astype(np.float16) for _ in range(3))
    ao = np.empty_like(q)
    for causal in (False, True):
        out.append((f"attention forward{', causal' if causal else ''}", f"1x{heads}x{t}x{d}",
                    lambda causal=causal: (attention_fwd[(t // 64, heads)](q, k, v, ao, d ** -0.5, t, D=d, BLOCK_M=64,
                                                                          BLOCK_N=64, CAUSAL=causal), ao)[1],
                    lambda causal=causal: _attention_np(q, k, v, d ** -0.5, causal), 2e-2, attention_fwd))
    m = 512 if quick else 1024
    a16, b16 = rng.standard_normal((m, m)).astype(np.float16), rng.standard_normal((m, m)).astype(np.float16)
    a32, b32 = a16.astype(np.float32), b16.astype(np.float32)
    c16 = np.empty((m, m), np.float16)
    c03 = np.empty((m, m), np.float16)
    grid03 = (mt.cdiv(m, 128) * mt.cdiv(m, 128),)
    out.append(("matmul (tutorial 03, 128x128x64, GROUP 8)", f"{m}^3",
                lambda: (matmul_kernel[grid03](a16, b16, c03, m, m, m, m, 1, m, 1, m, 1, BLOCK_SIZE_M=128,
                                               BLOCK_SIZE_N=128, BLOCK_SIZE_K=64, GROUP_SIZE_M=8, ACTIVATION=""),
                         c03)[1],
                lambda: (a32 @ b32).astype(np.float16), 1e-2 * np.sqrt(m), matmul_kernel))
    out.append(("persistent matmul (tutorial 09, 24 programs)", f"{m}^3",
                lambda: (matmul_persistent[(24,)](a16, b16, c16, m, m, m, NUM_SMS=24, BM=128, BN=128, BK=64), c16)[1],
                lambda: (a32 @ b32).astype(np.float16), 1e-2 * np.sqrt(m), matmul_persistent))
    g, size = 4, (128 if quick else 256)
    mats = [[rng.standard_normal((size, size)).astype(np.float16) for _ in range(2)] for _ in range(g)]
    outs = [np.empty((size, size), np.float16) for _ in range(g)]
    table = [np.array([mt.data_ptr(x) for x in xs], np.int64)
             for xs in ([p[0] for p in mats], [p[1] for p in mats], outs)]
    dims = np.array([size] * 3 * g, np.int32)
    out.append(("grouped GEMM (tutorial 08, 128x128x32, 84 programs)", f"{g}x{size}^3",
                lambda: (grouped_gemm[(84,)](*table, dims, g, NUM_SMS=84, BM=128, BN=128, BK=32), np.stack(outs))[1],
                lambda: np.stack([(x.astype(np.float32) @ y.astype(np.float32)).astype(np.float16) for x, y in mats]),
                1e-2 * np.sqrt(size), grouped_gemm))
    return out


def run(quick: bool):
    allocator = warm_allocator()
    repeats = 3 if quick else 15
    rows, over = [], []
    for name, size, kernel_fn, numpy_fn, tol, kernel, *judge in cases(quick):
        got = np.asarray(kernel_fn(), np.float64)
        err = judge[0](got) if judge else float(np.abs(got - np.asarray(numpy_fn(), np.float64)).max())
        path = kernel.last_launch["path"]
        t_k, t_np = [], []
        for _ in range(repeats):
            t_k.append(median_time(kernel_fn, 1, warmup=0))
            t_np.append(median_time(numpy_fn, 1, warmup=0))
        ratio = float(np.median(np.array(t_k) / np.array(t_np)))
        if ratio > 1.5 or not path.startswith("lockstep") or not err <= tol:
            over.append(f"{name} {ratio:.1f}×" + ("" if path.startswith("lockstep") else " (one program at a time)")
                        + ("" if err <= tol else " (error above tolerance)"))
        rows.append((name, size, f"{np.median(t_np) * 1e3:.1f}", f"{np.median(t_k) * 1e3:.1f}", f"**{ratio:.1f}×**",
                     "yes" if ratio <= 1.5 else "no", path.split(" (")[0], f"{err:.1e}" + ("" if err <= tol else " (!)")))
    table = markdown(["kernel", "size", "numpy ms", "executor ms", "executor / numpy", "≤ 1.5×", "path",
                      "max abs error"], rows)
    cover = compat.coverage_line()
    goals = "met" if not over else "missed on " + ", ".join(over)
    threads = expressions.threads()
    return table + (f"\n\nMedians of {repeats} alternating runs on {machine()}; {allocator}; big deferred elementwise "
                    f"results on {threads} thread{'s' if threads > 1 else ''} ($MINITRITON_THREADS; on one for "
                    f"{expressions.BLAS_SPIN:g} s after a matmul, while OpenBLAS's idle workers spin; numpy's own "
                    f"ufuncs run on one, its matmul on OpenBLAS's threads).\n\nGoals (every kernel ≤ 1.5× numpy, "
                    f"in lockstep, within tolerance of numpy's answer): {goals}.\n\n{cover}\n")


def main(argv=None):
    common.main(__doc__, "tutorials", run, argv)


if __name__ == "__main__":
    main()
