"""`triton.language.math`: the math functions Triton keeps in their own module (`tl.math.exp2`,
`import triton.language.math as tlm`), with the language's meanings (minitriton/elementwise.py)."""
from ..elementwise import (abs, ceil, cos, div_rn, erf, exp, exp2, fdiv, floor, fma, log, log2, rsqrt, sin, sqrt,
                           sqrt_rn, umulhi)

__all__ = ["abs", "ceil", "cos", "div_rn", "erf", "exp", "exp2", "fdiv", "floor", "fma", "log", "log2", "rsqrt",
           "sin", "sqrt", "sqrt_rn", "umulhi"]
