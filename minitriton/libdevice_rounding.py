"""CUDA libdevice's arithmetic with a named rounding mode and its conversions, as Triton exposes
them: `add_rn`, `div_rz`, `sqrt_rd`, `fma_ru`, ..., `float2int_rn`, `ll2float_rz`, ...,
`double2float_rd`, and the bit reinterpretations (`float_as_int`, `hiloint2double`, ...).

The suffix is IEEE 754's rounding: rn to nearest (ties to even), rz toward zero, rd down, ru up.
Round-to-nearest results come from numpy's correctly rounded operations where one exists; the
other modes (and fma, which numpy cannot fuse) are computed exactly, element by element: the
exact result as a fraction (or, for square roots, compared through its square), then the
representable neighbour the mode asks for.  Exact and slow (microseconds per element), which
fits what these functions are for: numerics that must match the GPU to the bit.

Float-to-integer conversions round by the mode, then saturate to the result's range, NaN giving
0, as PTX's cvt does.  Types follow Triton's dispatch table, whose unsigned conversions return
the bits in a signed type (`float2uint_rn` gives int32, `double2ull_rn` int64).
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from . import dtypes as D
from .tensor import broadcast_shape, tensor, to_tensor
from .arithmetic import rows_aligned
from .libdevice_ints import operand_arrays

MODES = ("rn", "rz", "rd", "ru")


# ---------------------------------------------------------------- exact rounding
def _round_one(exact, approx, mode, np_type):
    """The float of type np_type that `mode` rounds `exact` to: exact is a Fraction, or a pair
    ("sqrt", q) / ("rsqrt", q) for the square root of q or its reciprocal."""
    def sign(x):        # sign of (x - exact), x a finite float
        fx = Fraction(float(x))
        if isinstance(exact, Fraction):
            return (fx > exact) - (fx < exact)
        kind, q = exact
        if kind == "sqrt":
            return 1 if fx > 0 and fx * fx > q else (-1 if fx < 0 or fx * fx < q else 0)
        return -1 if fx <= 0 else (fx * fx * q > 1) - (fx * fx * q < 1)     # rsqrt

    top = np_type(np.finfo(np_type).max)
    if sign(top) < 0 or sign(-top) > 0:             # beyond the finite range
        positive = sign(top) < 0
        big = top if positive else -top
        if mode == "rz" or (mode == "rd" and positive) or (mode == "ru" and not positive):
            return big
        if mode == "rn":
            ulp = Fraction(float(top)) - Fraction(float(np.nextafter(top, np_type(0))))
            half = Fraction(float(big)) + (ulp / 2 if positive else -ulp / 2)
            beyond = (exact >= half) if positive else (exact <= half) if isinstance(exact, Fraction) else True
            return np_type(np.inf if positive else -np.inf) if beyond else big
        return np_type(np.inf if positive else -np.inf)
    c = np_type(approx) if np.isfinite(approx) else (top if approx > 0 else -top)
    while sign(c) > 0:
        c = np.nextafter(c, np_type(-np.inf))
    while sign(np.nextafter(c, np_type(np.inf))) <= 0:
        c = np.nextafter(c, np_type(np.inf))
    lo = c                                          # the largest float <= exact
    if sign(lo) == 0:
        return lo
    hi = np.nextafter(lo, np_type(np.inf))
    if mode == "rd" or (mode == "rz" and lo >= 0):
        return lo
    if mode == "ru" or mode == "rz":
        return hi
    mid = (Fraction(float(lo)) + Fraction(float(hi))) / 2     # rn: the nearer, ties to the even one
    if isinstance(exact, Fraction):
        d = (mid > exact) - (mid < exact)                         # sign of (mid - exact)
    else:
        kind, q = exact
        d = ((mid * mid > q) - (mid * mid < q)) if kind == "sqrt" else ((mid * mid * q > 1) - (mid * mid * q < 1))
    if d > 0:
        return lo
    if d < 0:
        return hi
    bits = np.array([lo], np_type).view(np.dtype(f"u{np.dtype(np_type).itemsize}"))[0]
    return lo if bits % 2 == 0 else hi


def _exactly(name, arrays, dt, shape, exact_of, approx_of, mode):
    """Each element rounded by `mode` from its exact value (exact_of: floats -> Fraction or pair,
    None where IEEE's special values decide; approx_of gives numpy's result, used for those)."""
    np_type = np.dtype(dt.container).type
    approx = approx_of(*arrays)
    out = np.array(approx, np_type, copy=True)
    for idx in np.ndindex(out.shape):
        vals = [a[idx] for a in arrays]
        exact = exact_of(*vals) if all(np.isfinite(v) for v in vals) else None
        if exact is not None:       # (infinities, NaNs, x / 0, sqrt(-x): IEEE's answers, numpy's)
            out[idx] = _round_one(exact, approx[idx], mode, np_type)
    if name.startswith(("add_", "sub_")):
        _signed_zeros(out, arrays, name.startswith("sub_"), mode)
    return tensor(out, dt, shape)


def _signed_zeros(out, arrays, subtract, mode):
    """IEEE's sign of an exactly zero sum: -0 when rounding down, unless both addends are +0; +0
    in the other modes, unless both are -0."""
    a, b = arrays
    sb = np.signbit(b) != subtract               # the sign of the addend b (or of -b)
    both_zero = (a == 0) & (b == 0)
    negative = np.where(both_zero, (np.signbit(a) | sb) if mode == "rd" else (np.signbit(a) & sb), mode == "rd")
    zero = out == 0
    out[zero] = np.where(negative[zero], -0.0, 0.0).astype(out.dtype)


def _frac(v):
    return Fraction(float(v))


def _arith(name, mode, nargs, exact_of, numpy_op, exact_always=False):
    def op(*xs):
        if len(xs) != nargs:
            raise TypeError(f"libdevice.{name} takes {nargs} arguments, got {len(xs)}")
        arrays, dt, shape = operand_arrays(name, xs, (D.float32, D.float64))
        with np.errstate(all="ignore"):
            if mode == "rn" and not exact_always:
                return tensor(np.asarray(numpy_op(*arrays), dt.container), dt, shape)
            return _exactly(name, arrays, dt, shape, exact_of, lambda *a: numpy_op(*a), mode)
    op.__name__ = name
    return op


def _div_exact(a, b):
    return None if b == 0 else _frac(a) / _frac(b)


def _sqrt_exact(a):
    return None if a < 0 else ("sqrt", _frac(a))


def _fma_numpy(a, b, c):
    wide = np.longdouble
    return (a.astype(wide) * b.astype(wide) + c.astype(wide)).astype(a.dtype)


_OPS = {
    "add": (2, lambda a, b: _frac(a) + _frac(b), np.add, False),
    "sub": (2, lambda a, b: _frac(a) - _frac(b), np.subtract, False),
    "mul": (2, lambda a, b: _frac(a) * _frac(b), np.multiply, False),
    "div": (2, _div_exact, np.divide, False),
    "rcp": (1, lambda a: None if a == 0 else 1 / _frac(a), lambda a: np.divide(a.dtype.type(1), a), False),
    "sqrt": (1, _sqrt_exact, np.sqrt, False),
    "fma": (3, lambda a, b, c: _frac(a) * _frac(b) + _frac(c), _fma_numpy, True),
}
for _op, (_n, _exact, _np, _always) in _OPS.items():
    for _mode in MODES:
        globals()[f"{_op}_{_mode}"] = _arith(f"{_op}_{_mode}", _mode, _n, _exact, _np, _always)


def rsqrt_rn(x):
    """1 / sqrt(x) correctly rounded (fp32 only, as in Triton's table)."""
    arrays, dt, shape = operand_arrays("rsqrt_rn", [x], (D.float32,))
    with np.errstate(all="ignore"):
        return _exactly("rsqrt_rn", arrays, dt, shape, lambda a: None if a <= 0 else ("rsqrt", _frac(a)),
                        lambda a: (1 / np.sqrt(a.astype(np.float64))).astype(a.dtype), "rn")


# ---------------------------------------------------------------- conversions
_ROUND = {"rn": np.rint, "rz": np.trunc, "rd": np.floor, "ru": np.ceil}


def _to_int(name, source, bits, signed, result):
    def op(x, mode):
        arrays, dt, shape = operand_arrays(name, [x], (source,))
        v = _ROUND[mode](arrays[0].astype(np.float64) if bits <= 32 else arrays[0].astype(np.longdouble))
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
        out = np.zeros(v.shape, np.int64 if signed or bits < 64 else np.uint64)
        nan = np.isnan(v)
        below, above = v <= lo, v >= hi
        mid = ~(nan | below | above)
        out[mid] = v[mid].astype(out.dtype)
        out[below] = lo
        out[above] = hi
        store = np.dtype(f"{'i' if signed else 'u'}{bits // 8}")
        return tensor(out.astype(store).view(result.container), result, shape)
    return op


def _from_int(name, source, target):
    def op(x, mode):
        t = x if isinstance(x, tensor) else to_tensor(x, tensor(None, source, ()))
        if t.dtype is not source:
            raise TypeError(f"libdevice.{name} takes {source} blocks (as in Triton), got {t.dtype}")
        v = t.v
        np_type = np.dtype(target.container).type
        approx = v.astype(np_type)
        if mode == "rn":
            return tensor(approx, target, t.shape)
        out = approx.copy()
        for idx in np.ndindex(v.shape):
            out[idx] = _round_one(Fraction(int(v[idx])), approx[idx], mode, np_type)
        return tensor(out, target, t.shape)
    return op


_CONVERSIONS = {   # name stem -> (source, integer bits, signed, result type)
    "float2int": (D.float32, 32, True, D.int32), "float2uint": (D.float32, 32, False, D.int32),
    "float2ll": (D.float32, 64, True, D.int64), "float2ull": (D.float32, 64, False, D.int64),
    "double2int": (D.float64, 32, True, D.int32), "double2uint": (D.float64, 32, False, D.int32),
    "double2ll": (D.float64, 64, True, D.int64), "double2ull": (D.float64, 64, False, D.int64),
}
for _stem, (_src, _bits, _signed, _res) in _CONVERSIONS.items():
    _conv = _to_int(_stem, _src, _bits, _signed, _res)
    for _mode in MODES:
        globals()[f"{_stem}_{_mode}"] = (lambda f, m: (lambda x: f(x, m)))(_conv, _mode)
        globals()[f"{_stem}_{_mode}"].__name__ = f"{_stem}_{_mode}"

_FROM_INT = {"int2float": (D.int32, D.float32), "uint2float": (D.uint32, D.float32),
             "ll2float": (D.int64, D.float32), "ull2float": (D.uint64, D.float32),
             "ll2double": (D.int64, D.float64), "ull2double": (D.uint64, D.float64)}
for _stem, (_src, _dst) in _FROM_INT.items():
    _conv = _from_int(_stem, _src, _dst)
    for _mode in MODES:
        globals()[f"{_stem}_{_mode}"] = (lambda f, m: (lambda x: f(x, m)))(_conv, _mode)
        globals()[f"{_stem}_{_mode}"].__name__ = f"{_stem}_{_mode}"
_int2double, _uint2double = _from_int("int2double_rn", D.int32, D.float64), \
    _from_int("uint2double_rn", D.uint32, D.float64)


def int2double_rn(x):
    """int32 to fp64: always exact."""
    return _int2double(x, "rn")


def uint2double_rn(x):
    """uint32 to fp64: always exact."""
    return _uint2double(x, "rn")


def _double2float(mode):
    def op(x):
        arrays, dt, shape = operand_arrays(f"double2float_{mode}", [x], (D.float64,))
        v = arrays[0]
        approx = v.astype(np.float32)
        if mode == "rn":
            return tensor(approx, D.float32, shape)
        out = approx.copy()
        for idx in np.ndindex(v.shape):
            if np.isfinite(v[idx]):
                out[idx] = _round_one(Fraction(float(v[idx])), approx[idx], mode, np.float32)
        return tensor(out, D.float32, shape)
    return op


double2float_rn, double2float_rz, double2float_rd, double2float_ru = (_double2float(m) for m in MODES)


# ---------------------------------------------------------------- the same bits, another type
def _reinterpret(name, source, target):
    def op(x):
        t = x if isinstance(x, tensor) else to_tensor(x, tensor(None, source, ()))
        if t.dtype is not source:
            raise TypeError(f"libdevice.{name} takes {source} blocks (as in Triton), got {t.dtype}")
        return tensor(np.ascontiguousarray(t.v).view(target.container), target, t.shape)
    op.__name__ = name
    return op


int_as_float = _reinterpret("int_as_float", D.int32, D.float32)
float_as_int = _reinterpret("float_as_int", D.float32, D.int32)
uint_as_float = _reinterpret("uint_as_float", D.uint32, D.float32)
float_as_uint = _reinterpret("float_as_uint", D.float32, D.int32)     # (Triton's table: an int32 result)
longlong_as_double = _reinterpret("longlong_as_double", D.int64, D.float64)
double_as_longlong = _reinterpret("double_as_longlong", D.float64, D.int64)


def double2hiint(x):
    arrays, dt, shape = operand_arrays("double2hiint", [x], (D.float64,))
    return tensor((np.ascontiguousarray(arrays[0]).view(np.int64) >> np.int64(32)).astype(np.int32), D.int32, shape)


def double2loint(x):
    arrays, dt, shape = operand_arrays("double2loint", [x], (D.float64,))
    bits = np.ascontiguousarray(arrays[0]).view(np.uint64)
    return tensor((bits & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.int32), D.int32, shape)


def hiloint2double(hi, lo):
    h, l_ = (x if isinstance(x, tensor) else to_tensor(x, tensor(None, D.int32, ())) for x in (hi, lo))
    if h.dtype is not D.int32 or l_.dtype is not D.int32:
        raise TypeError(f"libdevice.hiloint2double takes two int32 blocks (as in Triton), got {h.dtype}, {l_.dtype}")
    shape = broadcast_shape(h.shape, l_.shape)
    a, b = np.broadcast_arrays(rows_aligned(h, len(shape)), rows_aligned(l_, len(shape)))
    bits = (a.astype(np.int64).view(np.uint64) << np.uint64(32)) | b.view(np.uint32).astype(np.uint64)
    return tensor(bits.view(np.float64), D.float64, shape)


# what libdevice.py re-exports
NAMES = sorted(n for n, f in list(globals().items()) if callable(f) and not n.startswith("_")
               and n not in ("Fraction", "broadcast_shape", "tensor", "to_tensor", "rows_aligned")
               and getattr(f, "__module__", None) == __name__)
