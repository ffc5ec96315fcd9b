"""How fast the CPU executor runs the tutorial matmul, against numpy in the same process.

1024³, fp16 inputs, fp32 accumulation, fp16 output; BLOCK_M = BLOCK_N = BLOCK_K = 64 and 128.
Baseline: numpy's float32 matmul of the same operands (already in float32).  Also times the
one-program-at-a-time path and checks that both paths give the same bits.
Goal (issue 2): lockstep at most 3x numpy at BLOCK 64 and 2x at BLOCK 128.
"""
from __future__ import annotations

import numpy as np

from benchmarks.common import parser, median_time, markdown, machine, update_readme
import minitriton as mt
from kernels import gemm


def run(quick: bool):
    rng = np.random.default_rng(0)
    n = 1024
    a = rng.standard_normal((n, n)).astype(np.float16)
    b = rng.standard_normal((n, n)).astype(np.float16)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    repeats = 3 if quick else 7
    base = median_time(lambda: a32 @ b32, repeats * 3)
    rows = [("numpy float32 matmul", "-", f"{base * 1e3:.1f}", "1.00×", "", "")]
    for block, goal in ((64, 3.0), (128, 2.0)):
        cfg = dict(BLOCK_M=block, BLOCK_N=block, BLOCK_K=block, GROUP_M=8, SPLIT_K=1)
        lock = median_time(lambda: gemm.matmul(a, b, config=cfg), repeats)
        c_lock = gemm.matmul(a, b, config=cfg)
        c_one = one_at_a_time(a, b, cfg)
        one = median_time(lambda: one_at_a_time(a, b, cfg), 1 if quick else 3, warmup=0)
        same = "yes" if np.array_equal(c_lock.view(np.uint16), c_one.view(np.uint16)) else "NO"
        rows.append((f"minitriton lockstep, BLOCK {block}", f"≤ {goal:.0f}×", f"{lock * 1e3:.1f}",
                     f"{lock / base:.2f}×", f"{one * 1e3:.0f} ({one / base:.1f}×)", same))
    return markdown(["path", "goal", "ms", "vs numpy", "one program at a time: ms (vs numpy)",
                     "bit-identical"], rows) + f"\n\n1024³ fp16 matmul, median of {repeats} runs on {machine()}.\n"


def one_at_a_time(a, b, cfg):
    """The fallback path: every program of the launch run separately."""
    with mt.one_program_at_a_time():
        return gemm.matmul(a, b, config=cfg)


def main(argv=None):
    args = parser(__doc__).parse_args(argv)
    table = run(args.quick)
    print(table)
    if args.update_readme:
        update_readme("executor", table)


if __name__ == "__main__":
    main()
