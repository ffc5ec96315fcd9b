"""`triton.language.math`: the math functions Triton keeps in their own module (`tl.math.exp2`,
`import triton.language.math as tlm`), with the language's meanings (minitriton/elementwise.py)."""
from ..elementwise import (abs, ceil, cos, div_rn, erf, exp, exp2, fdiv, floor, fma, log, log2, rsqrt, sin, sqrt,
                           sqrt_rn, umulhi)

from .. import dtypes as D, libdevice
from ..tensor import to_tensor

__all__ = ["abs", "ceil", "cos", "div_rn", "erf", "exp", "exp2", "fdiv", "floor", "fma", "log", "log2", "rsqrt",
           "sin", "sqrt", "sqrt_rn", "umulhi", "mul_f32x2", "add_f32x2", "sub_f32x2", "fma_f32x2"]


def _f32x2(name, fn):
    """Blackwell's packed fp32 pair arithmetic (`mul.rn.f32x2` ...): per element it is the fp32
    operation rounded to nearest, and the fma fused (one rounding), which is what runs here."""
    def op(*xs):
        ts = [to_tensor(x) for x in xs]
        if any(t.dtype is not D.float32 for t in ts):
            raise TypeError(f"tl.math.{name} takes fp32 blocks, got {', '.join(str(t.dtype) for t in ts)}")
        return fn(*ts)
    op.__name__ = name
    return op


mul_f32x2 = _f32x2("mul_f32x2", lambda a, b: a * b)
add_f32x2 = _f32x2("add_f32x2", lambda a, b: a + b)
sub_f32x2 = _f32x2("sub_f32x2", lambda a, b: a - b)
fma_f32x2 = _f32x2("fma_f32x2", libdevice.fma)


def _add_math_1arg_docstr(name):
    """Triton's docstring decorators for math functions (`@math._add_math_1arg_docstr("softmax")`,
    copied with its standard library): they only write a docstring, so the function comes back."""
    return lambda fn: fn


_add_math_2arg_docstr = _add_math_3arg_docstr = _add_math_1arg_docstr


def __getattr__(name):
    """Triton 2.1-2.3 kept libdevice's functions in `tl.math` (`tl.math.tanh`, `tl.math.pow`,
    `tl.math.fast_expf`, ...), and kernels written then still call them so; Triton 3 moved them to
    `tl.extra.cuda.libdevice`.  Those names are found here too (not listed, as Triton 3 lists none)."""
    if name in libdevice.__all__:
        return getattr(libdevice, name)
    raise AttributeError(f"module 'triton.language.math' has no attribute {name!r}")
