"""`triton.language.math`: the math functions Triton keeps in their own module (`tl.math.exp2`,
`import triton.language.math as tlm`), with the language's meanings (minitriton/elementwise.py)."""
from ..elementwise import (abs, ceil, cos, div_rn, erf, exp, exp2, fdiv, floor, fma, log, log2, rsqrt, sin, sqrt,
                           sqrt_rn, umulhi)

__all__ = ["abs", "ceil", "cos", "div_rn", "erf", "exp", "exp2", "fdiv", "floor", "fma", "log", "log2", "rsqrt",
           "sin", "sqrt", "sqrt_rn", "umulhi"]


def _add_math_1arg_docstr(name):
    """Triton's docstring decorators for math functions (`@math._add_math_1arg_docstr("softmax")`,
    copied with its standard library): they only write a docstring, so the function comes back."""
    return lambda fn: fn


_add_math_2arg_docstr = _add_math_3arg_docstr = _add_math_1arg_docstr
