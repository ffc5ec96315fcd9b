"""The landscape of the matmul space on HypoGPU (lecture §1.3, §2.2), from the oracle.

For each named shape: how many of the 157,500 configs are legal, how rare good configs are,
how slow a typical one is, where the optimum sits on the roofline, and how long measuring
every legal config would take; then the BLOCK_K x num_stages interaction and the lecture's
24-config list.  Design targets (issue 3) are checked in the last column.
"""
from __future__ import annotations

import time

import numpy as np

import kernels
from autotune import Task
from benchmarks import common
from benchmarks.common import markdown
from kernels.shapes import SHAPES, triton_list
from minitriton.hypogpu import HypoGPU, Measurer, oracle, A100

COMPILE_S, RUNS = Measurer().compile_seconds, Measurer().runs


def shape_rows(dev):
    rows, results = [], {}
    for name, shape in SHAPES.items():
        task = Task(kernels.matmul, device=dev, **shape)
        t0 = time.perf_counter()
        o = oracle(task)
        seconds = time.perf_counter() - t0
        results[name] = o
        legal = o.times[o.legal]
        best = o.best_time
        flops = 2.0 * shape["M"] * shape["N"] * shape["K"]
        nbytes = 2.0 * (shape["M"] * shape["K"] + shape["K"] * shape["N"] + shape["M"] * shape["N"])
        hours = (legal.size * COMPILE_S + RUNS * legal.sum()) / 3600
        c = o.best_config.all_kwargs()
        rows.append((name, f"{shape['M']}×{shape['N']}×{shape['K']}", f"{flops / nbytes:.0f}",
                     f"{legal.size:,} ({legal.size / o.times.size:.0%})",
                     f"{(legal <= 1.05 * best).mean():.3%}", f"{np.median(legal) / best:.1f}×",
                     f"{np.percentile(legal, 90) / best:.1f}×", f"{best * 1e6:.1f}",
                     f"{flops / best / A100.tc_peak_flops:.0%}", f"{nbytes / best / A100.dram_bytes_per_s:.0%}",
                     "{BLOCK_M}/{BLOCK_N}/{BLOCK_K} w{num_warps} s{num_stages} g{GROUP_M} k{SPLIT_K}".format(**c),
                     f"{hours:.1f}", f"{seconds:.2f}"))
    table = markdown(["shape", "M×N×K", "FLOP/B", "legal", "within 5%", "median", "p90", "best µs", "% TC peak",
                      "% DRAM peak", "best BM/BN/BK warps stages GROUP_M SPLIT_K", "hours to measure all",
                      "oracle s"], rows)
    return table, results


def stages_table(o):
    """Slowdown vs the optimum for each BLOCK_K x num_stages, other knobs at the optimum's values."""
    space = o.space
    arrays = space.arrays()
    best = o.best_config.all_kwargs()
    fixed = np.ones(o.times.shape, bool)
    for k in ("BLOCK_M", "BLOCK_N", "num_warps", "GROUP_M", "SPLIT_K"):
        fixed &= arrays[k] == best[k]
    rows, best_stage = [], {}
    for bk in space.knobs["BLOCK_K"]:
        cells = []
        for s in space.knobs["num_stages"]:
            sel = fixed & (arrays["BLOCK_K"] == bk) & (arrays["num_stages"] == s)
            t = o.times[sel].min() / o.best_time
            cells.append(t)
        finite = [(t, s) for t, s in zip(cells, space.knobs["num_stages"]) if np.isfinite(t)]
        best_stage[bk] = min(finite)[1] if finite else None
        rows.append([f"BLOCK_K {bk}"] + [f"{t:.2f}" if np.isfinite(t) else "×" for t in cells]
                    + [best_stage[bk] if best_stage[bk] else "-"])
    return markdown(["", *(f"{s} stages" for s in space.knobs["num_stages"]), "best"], rows), best_stage


def targets(results, best_stage):
    sq, wg, dec = results["square"], results["wgrad"], results["decode"]
    legal = sq.times[sq.legal]
    arrays = wg.space.arrays()
    sk1 = wg.times[(arrays["SPLIT_K"] == 1)].min() / wg.best_time
    task = Task(kernels.matmul, **SHAPES["square"])
    refused = sum(not np.isfinite(sq.time_of(c)) for c in triton_list())
    stages = [s for s in best_stage.values() if s]
    falls = all(a >= b for a, b in zip(stages, stages[1:]))
    peak = 2 * 4096 ** 3 / sq.best_time / A100.tc_peak_flops
    rows = [
        ("square: legal configs", "50–75 %", f"{sq.legal.mean():.1%}", 0.5 <= sq.legal.mean() <= 0.75),
        ("square: legal configs within 5 % of the optimum", "< 0.1 %", f"{(legal <= 1.05 * sq.best_time).mean():.3%}",
         (legal <= 1.05 * sq.best_time).mean() < 0.001),
        ("square: median legal config vs optimum", "≥ 3×", f"{np.median(legal) / sq.best_time:.1f}×",
         np.median(legal) / sq.best_time >= 3),
        ("square: optimum's share of fp16 peak", "≥ 50 %", f"{peak:.0%}", peak >= 0.5),
        ("best num_stages falls as BLOCK_K grows (≥ 3 values)", "yes", f"{best_stage}", falls and len(set(stages)) >= 3),
        ("decode: optimum's BLOCK_M", "16", str(dec.best_config["BLOCK_M"]), dec.best_config["BLOCK_M"] == 16),
        ("wgrad: optimum's SPLIT_K", "≥ 8", str(wg.best_config["SPLIT_K"]), wg.best_config["SPLIT_K"] >= 8),
        ("wgrad: best SPLIT_K = 1 config vs optimum", "≥ 3×", f"{sk1:.2f}×", sk1 >= 3),
        ("lecture's 24-config list: refused for shared memory", "12", str(refused), refused == 12),
    ]
    del task
    return markdown(["design target", "wanted", "HypoGPU", "met"], [(a, b, c, "yes" if d else "**no**")
                                                                       for a, b, c, d in rows])


def run():
    dev = HypoGPU()
    table, results = shape_rows(dev)
    st, best_stage = stages_table(results["square"])
    out = ["Every config of the 157,500-point matmul space, timed exactly by the oracle:", "", table, "",
           "Square 4096³, BLOCK_K × num_stages (slowdown vs the optimum; other knobs at the optimum's values; "
           "× = refused for shared memory):", "", st, "", targets(results, best_stage), ""]
    return "\n".join(out)


def main(argv=None):
    common.main(__doc__, "landscape", lambda quick: run(), argv)


if __name__ == "__main__":
    main()
