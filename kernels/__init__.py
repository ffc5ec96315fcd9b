"""The kernel library: each kernel = minitriton source + wrapper + search space + float64 reference.

Modules: `gemm` (matmul, split-K, epilogue), `conv` (conv2d as implicit GEMM), `rowsum`
(long-row reduction with an rfactor split), `rowsoftmax` (row-wise softmax).
"""
from .gemm import matmul, matmul_relu
from .conv import conv2d
from .rowsum import row_sum
from .rowsoftmax import softmax

__all__ = ["matmul", "matmul_relu", "conv2d", "row_sum", "softmax"]
