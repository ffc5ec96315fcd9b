"""CUDA's libdevice math, as Triton exposes it (`from triton.language.extra import libdevice`,
tutorial 07): elementwise functions of fp32 and fp64 blocks, computed with numpy in the
block's own precision.  As in Triton, other element types are refused by name.

Predicates (isnan, isinf, isfinited, signbit) return int32 blocks, as libdevice's do.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import special

from . import dtypes as D, expressions, fast_loops
from .tensor import POOL, broadcast_shape, tensor, to_tensor
from .arithmetic import POOLED_BYTES, elementwise_alu, rows_aligned, operands


def _float_args(name, *xs):
    ts = [to_tensor(x) for x in xs]
    for t in ts:
        if t.dtype not in (D.float32, D.float64):
            raise TypeError(f"libdevice.{name} takes fp32 or fp64 blocks (as in Triton), got {t.dtype}")
    return ts


def _result(fn, dtype, shape, *args):
    """fn(*args) as a block.  A numpy ufunc of one big operand is deferred (expressions.unary),
    so that a store computes it straight into its output; another big result goes into a
    recycled array (a fresh one each launch group would fault its pages in anew)."""
    v = args[0]
    if isinstance(fn, np.ufunc) and fn.nin == 1 and expressions.enabled() and v.size >= expressions.MIN_ELEMENTS:
        return tensor.deferred(expressions.unary(fn, v, dtype.container, v.shape), dtype, shape)
    if isinstance(fn, np.ufunc) and v.nbytes >= POOLED_BYTES and all(a.shape == v.shape for a in args):
        out = fn(*args, out=POOL.empty(v.shape, dtype.container))
        result = tensor(out, dtype, shape)
        result.owned = True
        return result
    return tensor(np.asarray(fn(*args), dtype.container), dtype, shape)


def _unary(name, fn, out=None):
    def op(x):
        t, = _float_args(name, x)
        with np.errstate(all="ignore"):
            if out is not None:
                return tensor(np.asarray(fn(t.v.astype(t.dtype.container, copy=False))).astype(np.int32), out,
                              t.shape)
            return elementwise_alu(_result(fn, t.dtype, t.shape, t.v.astype(t.dtype.container, copy=False)))
    op.__name__ = name
    return op


def _binary(name, fn):
    def op(x, y):
        x, y, dt = operands(x, y)
        _float_args(name, x.to(dt) if x.dtype is not dt else x, y.to(dt) if y.dtype is not dt else y)
        shape = broadcast_shape(x.shape, y.shape)
        with np.errstate(all="ignore"):
            args = rows_aligned(x, len(shape), dt), rows_aligned(y, len(shape), dt)
            return elementwise_alu(_result(fn, dt, shape, *args))
    op.__name__ = name
    return op


def _lgamma(v):
    return np.vectorize(lambda s: math.lgamma(s) if s > 0 or s != math.floor(s) else math.inf,
                        otypes=[np.float64])(v).astype(v.dtype)


def _tgamma(v):
    def g(s):
        try:
            return math.gamma(s)
        except (ValueError, OverflowError):
            return math.nan if s <= 0 and s == math.floor(s) else math.copysign(math.inf, s) if s > 0 else 0.0
    return np.vectorize(g, otypes=[np.float64])(v).astype(v.dtype)


def _erf(v):
    return fast_loops.erf(v).astype(v.dtype)


def _erfc(v):
    return fast_loops.erfc(v).astype(v.dtype)


acos, acosh, asin, asinh = (_unary(n, f) for n, f in (("acos", np.arccos), ("acosh", np.arccosh),
                                                       ("asin", np.arcsin), ("asinh", np.arcsinh)))
atan, atanh, cbrt, ceil = (_unary(n, f) for n, f in (("atan", np.arctan), ("atanh", np.arctanh),
                                                      ("cbrt", np.cbrt), ("ceil", np.ceil)))
cos, cosh, exp, exp2 = (_unary(n, f) for n, f in (("cos", np.cos), ("cosh", np.cosh), ("exp", np.exp),
                                                   ("exp2", np.exp2)))
exp10 = _unary("exp10", lambda v: np.power(v.dtype.type(10), v))
expm1, fabs, floor, log = (_unary(n, f) for n, f in (("expm1", np.expm1), ("fabs", np.abs), ("floor", np.floor),
                                                      ("log", np.log)))
log10, log1p, log2, rint = (_unary(n, f) for n, f in (("log10", np.log10), ("log1p", np.log1p), ("log2", np.log2),
                                                       ("rint", np.rint)))
nearbyint = _unary("nearbyint", np.rint)
round = _unary("round", lambda v: np.trunc(v + np.copysign(v.dtype.type(0.5), v)))  # halves away from zero
rsqrt = _unary("rsqrt", lambda v: 1 / np.sqrt(v))
sin, sinh, sqrt, tan = (_unary(n, f) for n, f in (("sin", np.sin), ("sinh", np.sinh), ("sqrt", np.sqrt),
                                                   ("tan", np.tan)))
tanh, trunc = _unary("tanh", np.tanh), _unary("trunc", np.trunc)
erf, erfc = _unary("erf", _erf), _unary("erfc", _erfc)
lgamma, tgamma = _unary("lgamma", _lgamma), _unary("tgamma", _tgamma)
# Bessel functions of the first and second kind, and the modified ones of the first kind
j0, j1, y0, y1 = (_unary(n, f) for n, f in (("j0", special.j0), ("j1", special.j1), ("y0", special.y0),
                                             ("y1", special.y1)))
cyl_bessel_i0, cyl_bessel_i1 = _unary("cyl_bessel_i0", special.i0), _unary("cyl_bessel_i1", special.i1)
# the fast_ approximations of fp32 functions: computed exactly here (a GPU's are a few ulp off)
fast_expf, fast_exp10f, fast_logf, fast_log2f, fast_log10f = exp, exp10, log, log2, log10
fast_sinf, fast_cosf, fast_tanf = sin, cos, tan
isnan = _unary("isnan", np.isnan, D.int32)
isinf = _unary("isinf", np.isinf, D.int32)
isfinited = _unary("isfinited", np.isfinite, D.int32)
finitef = isfinited
signbit = _unary("signbit", np.signbit, D.int32)

atan2, copysign, fmax, fmin = (_binary(n, f) for n, f in (("atan2", np.arctan2), ("copysign", np.copysign),
                                                           ("fmax", np.fmax), ("fmin", np.fmin)))
fmod, hypot, pow, remainder = (_binary(n, f) for n, f in (("fmod", np.fmod), ("hypot", np.hypot),
                                                           ("pow", np.power),
                                                           ("remainder", lambda a, b: a - b * np.rint(a / b))))
nextafter = _binary("nextafter", np.nextafter)
fast_dividef = _binary("fast_dividef", np.divide)
fast_powf = pow
fdim = _binary("fdim", lambda a, b: np.where(a > b, a - b, 0).astype(a.dtype))


def fma(x, y, z):
    """x * y + z: exact for fp32 blocks (the product and sum are formed in fp64, then rounded);
    for fp64 blocks the product is rounded first (numpy has no fused multiply-add)."""
    x, y, z = _float_args("fma", x, y, z)
    dt = D.float64 if D.float64 in (x.dtype, y.dtype, z.dtype) else D.float32
    shape = broadcast_shape(broadcast_shape(x.shape, y.shape), z.shape)
    v = [rows_aligned(t, len(shape), D.float64) for t in (x, y, z)]
    return elementwise_alu(tensor((v[0] * v[1] + v[2]).astype(dt.container), dt, shape))


def _nary(name, fn, n):
    """A function of n float blocks of one type, computed in it."""
    def op(*xs):
        ts = _float_args(name, *xs)
        if len(ts) != n:
            raise TypeError(f"libdevice.{name} takes {n} arguments, got {len(ts)}")
        dt = D.float64 if any(t.dtype is D.float64 for t in ts) else D.float32
        shape = ts[0].shape
        for t in ts[1:]:
            shape = broadcast_shape(shape, t.shape)
        with np.errstate(all="ignore"):
            args = [rows_aligned(t, len(shape), dt) for t in ts]
            return elementwise_alu(tensor(np.asarray(fn(*args), dt.container), dt, shape))
    op.__name__ = name
    return op


def _float_and_int(name, fn, int_first=False):
    """f(float block, int32 block) (ldexp, scalbn), or f(int32 order, float block) with
    `int_first` (jn, yn): computed in the float's type."""
    def op(*args):
        x, k = (args[1], args[0]) if int_first else args
        t, = _float_args(name, x)
        kt = to_tensor(k, tensor(None, D.int32, ()))
        if not kt.dtype.is_int():
            raise TypeError(f"libdevice.{name} takes an int32 operand (as in Triton), got {kt.dtype}")
        shape = broadcast_shape(t.shape, kt.shape)
        v, n = rows_aligned(t, len(shape), t.dtype), rows_aligned(kt, len(shape), D.int32)
        with np.errstate(all="ignore"):
            out = fn(n, v) if int_first else fn(v, n)
        return tensor(np.asarray(out, t.dtype.container), t.dtype, shape)
    op.__name__ = name
    return op


def _ilogb(v):
    """The unbiased exponent as an int32: FP_ILOGB0 (-2**31) for 0, 2**31-1 for NaN and infinity."""
    exp = np.frexp(v)[1].astype(np.int64) - 1
    out = np.where(v == 0, -2 ** 31, np.where(np.isfinite(v), exp, 2 ** 31 - 1))
    return out.astype(np.int32)


sinpi = _unary("sinpi", lambda v: np.where(v == np.rint(v), v.dtype.type(0) * np.sign(v),
                                           np.sin(v.dtype.type(np.pi) * (v - 2 * np.round(v / 2)))))
cospi = _unary("cospi", lambda v: np.where(np.abs(v - np.rint(v)) == 0.5, v.dtype.type(0),
                                           np.cos(v.dtype.type(np.pi) * (v - 2 * np.round(v / 2)))))
rcbrt = _unary("rcbrt", lambda v: 1 / np.cbrt(v))
erfinv, erfcinv, erfcx = _unary("erfinv", special.erfinv), _unary("erfcinv", special.erfcinv), \
    _unary("erfcx", special.erfcx)
normcdf, normcdfinv = _unary("normcdf", special.ndtr), _unary("normcdfinv", special.ndtri)
logb = _unary("logb", lambda v: np.where(v == 0, -np.inf, np.where(np.isfinite(v), np.frexp(v)[1] - 1.0,
                                                                  np.abs(v))).astype(v.dtype))
saturatef = _unary("saturatef", lambda v: np.where(np.isnan(v), v.dtype.type(0), np.clip(v, 0, 1)))
ilogb = _unary("ilogb", _ilogb, D.int32)
llrint = _unary("llrint", lambda v: np.rint(v).astype(np.int64), D.int64)
llround = _unary("llround", lambda v: np.trunc(v + np.copysign(v.dtype.type(0.5), v)).astype(np.int64), D.int64)
rhypot = _nary("rhypot", lambda a, b: 1 / np.hypot(a, b), 2)
norm3d = _nary("norm3d", lambda a, b, c: np.sqrt(a * a + b * b + c * c), 3)
rnorm3d = _nary("rnorm3d", lambda a, b, c: 1 / np.sqrt(a * a + b * b + c * c), 3)
norm4d = _nary("norm4d", lambda a, b, c, d: np.sqrt(a * a + b * b + c * c + d * d), 4)
rnorm4d = _nary("rnorm4d", lambda a, b, c, d: 1 / np.sqrt(a * a + b * b + c * c + d * d), 4)
ldexp = _float_and_int("ldexp", np.ldexp)
scalbn = _float_and_int("scalbn", np.ldexp)
jn = _float_and_int("jn", special.jv, int_first=True)
yn = _float_and_int("yn", special.yv, int_first=True)


def abs(x):
    """|x| of int32, int64, fp32 and fp64 blocks, by Triton's table (libdevice's abs/llabs/fabs)."""
    t = to_tensor(x)
    return int_abs(t) if t.dtype.is_int() else fabs(t)


# the rest of libdevice's table: integer intrinsics, rounding modes, conversions
from .libdevice_ints import (clz, popc, ffs, brev, mulhi, mul24, sad, hadd, rhadd, byte_perm,  # noqa: E402,F401
                             int_abs)
from .libdevice_rounding import *  # noqa: E402,F401,F403
from .libdevice_rounding import NAMES as _ROUNDING  # noqa: E402

# what `from triton.language.extra.libdevice import *` gives: the functions defined here
__all__ = sorted({n for n, f in list(globals().items())
                  if callable(f) and not n.startswith("_") and getattr(f, "__module__", None) == __name__}
                 | set(_ROUNDING) | {"clz", "popc", "ffs", "brev", "mulhi", "mul24", "sad", "hadd", "rhadd",
                                     "byte_perm"})

# Triton's CUDA libdevice names that minitriton does not run: refused by name
NOT_YET = ("rcp64h",)


def __getattr__(name):
    if name in NOT_YET:
        raise NotImplementedError(f"libdevice.{name} is not supported by minitriton yet")
    raise AttributeError(f"module 'triton.language.extra.libdevice' has no attribute {name!r}")
