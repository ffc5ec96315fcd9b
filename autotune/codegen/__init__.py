"""From a te computation to minitriton kernels: analysis, Ansor's sketch rules, and source.

`generate(output)` inlines element-wise computes into their consumer, then finds the one
reduction at the heart of the computation and classifies it:

* a contraction `sum_k A[.., k, ..] * B[.., k, ..]` (a matmul, either operand transposed, by
  strides) with an element-wise epilogue (bias along either output axis, another M x N input,
  scaling, ReLU, GELU, exp, casts): multi-level tiling with the epilogue fused into the store,
  and, where the output cannot fill the GPU and K is long, rfactor (split-K partial tiles and
  a kernel that adds them and applies the epilogue);
* anything else is refused with an error naming the expression.

Each sketch's kernels are emitted as readable minitriton source (`sketch.source`), compiled
from it (registered with linecache so tracebacks and the lowering see it), with the blanks
(BLOCK_M/N/K, GROUP_M, SPLIT_K, warps, stages) as constexpr meta-parameters, and the operator
states its launch profile from the same formulas as the library GEMM (autotune/families/gemm.py).
One module per operator family: gemm, conv, rowwise, reduction; analysis and operator hold
what they share.
"""
from __future__ import annotations

from .. import te
from .analysis import Unsupported, inline, reductions, strip_casts  # noqa: F401 (Unsupported: users catch it here)
from .conv import Conv2D, ConvOperator
from .gemm import Contraction, GemmOperator
from .operator import Operator  # noqa: F401
from .reduction import ReductionOperator, RowReduction
from .rowwise import RowWise, RowWiseOperator


def generate(output) -> Operator:
    if not isinstance(output, te.Compute):
        raise TypeError(f"te.generate: expects the output of te.compute, got {output!r}")
    reds = reductions(inline(output.body), [])
    products = [r for r in reds if isinstance(strip_casts(r.body), te.Binary) and strip_casts(r.body).op == "*"]
    if len(output.shape) == 1 and len(reds) == 1 and not products:
        return ReductionOperator(RowReduction(output))
    if len(output.shape) == 4:
        return ConvOperator(Conv2D(output))
    if len(output.shape) == 2 and reds and len(products) < len(reds):
        return RowWiseOperator(RowWise(output))
    if not reds:
        raise Unsupported(f"{output.name} = {output.body!r}: an element-wise computation alone is not generated "
                          f"(fuse it into a reduction's output, as an epilogue)")
    return GemmOperator(Contraction(output))


te.generate = generate   # `te.generate(C)`: the expression language (below) offers what is built on it here
