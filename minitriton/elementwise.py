"""Element-wise math: exp, log, sqrt and the other float functions, abs, maximum/minimum with
Triton's NaN rules, umulhi, fdiv/div_rn, clamp, fma, and `tl.where` (`tl.math` is this module)."""
from __future__ import annotations

import math
import warnings

import numpy as np

from . import context, expressions, fast_loops
from . import dtypes as D
from .tensor import FROM_ABOVE, broadcast_shape, check_lockstep_result, tensor, to_tensor, round_to
from .affine import aligned_steps, running_rows
from .arithmetic import constexpr_value, elementwise_alu, operands, rows_aligned
from .shapes import broadcast_to


FP32_FP64, FP32, INT32_INT64 = ("fp32", "fp64"), ("fp32",), ("int32", "int64", "uint32", "uint64")


def check_dtype(accepted, *args):
    """Triton's math functions take only the types libdevice has them for (fp32 and fp64 for exp,
    log, sqrt, sin ...; fp32 for the correctly rounded ones), so that a kernel casts an fp16 or
    bf16 block itself rather than compute in a type the hardware lacks; a tensor of another type
    is refused with Triton's message (Python numbers are not checked, as in Triton)."""
    for a in args:
        if isinstance(a, tensor) and str(a.dtype) not in accepted:
            raise ValueError(f"Expected dtype {list(accepted)} but got {a.dtype}")


def _float_unary(name, fn, accepted=FP32_FP64):
    def op(x, *args, **kw):
        check_dtype(accepted, x)
        x = to_tensor(x)
        if not x.dtype.is_floating():
            raise TypeError(f"tl.{name} needs a floating-point input, got {x.dtype}")
        with np.errstate(all="ignore"):
            v = x.v.astype(x.dtype.container, copy=False)
            out = expressions.ufunc(fn, v) if isinstance(fn, np.ufunc) else fn(v)
        return elementwise_alu(tensor(round_to(out, x.dtype), x.dtype, x.shape))
    op.__name__ = name
    return op


exp = _float_unary("exp", np.exp)
exp2 = _float_unary("exp2", np.exp2)
log = _float_unary("log", np.log)
log2 = _float_unary("log2", np.log2)
sqrt = _float_unary("sqrt", np.sqrt)
rsqrt = _float_unary("rsqrt", lambda v: 1 / np.sqrt(v))
sin = _float_unary("sin", np.sin)
cos = _float_unary("cos", np.cos)
floor = _float_unary("floor", np.floor)
ceil = _float_unary("ceil", np.ceil)
sigmoid = _float_unary("sigmoid", lambda v: 1 / (1 + np.exp(-v)))
erf = _float_unary("erf", fast_loops.erf)


def abs(x):
    x = to_tensor(x)
    return tensor(np.abs(x.v), x.dtype, x.shape)


def _binary_fn(name, fn):
    def op(x, y, *args, **kw):
        x = to_tensor(x, y if isinstance(y, tensor) else None)
        y = to_tensor(y, x)
        dt = D.promote(x.dtype, y.dtype)
        shape = broadcast_shape(x.shape, y.shape)
        a, b = rows_aligned(x, len(shape), dt), rows_aligned(y, len(shape), dt)
        check_lockstep_result(shape, np.dtype(dt.container).itemsize, a, b)
        out = fn(a, b)
        return elementwise_alu(tensor(out.astype(dt.container, copy=False), dt, shape))
    op.__name__ = name
    return op


class PropagateNan:
    """How tl.maximum / tl.minimum treat NaN: NONE returns the other operand (the default, as
    IEEE maxNum does), ALL returns NaN."""
    NONE = 0
    ALL = 0xFFFF


_max_nan, _min_nan = _binary_fn("maximum", np.maximum), _binary_fn("minimum", np.minimum)
_max_num, _min_num = _binary_fn("maximum", np.fmax), _binary_fn("minimum", np.fmin)


def maximum(x, y, propagate_nan=PropagateNan.NONE):
    return (_max_nan if constexpr_value(propagate_nan) == PropagateNan.ALL else _max_num)(x, y)


def minimum(x, y, propagate_nan=PropagateNan.NONE):
    return (_min_nan if constexpr_value(propagate_nan) == PropagateNan.ALL else _min_num)(x, y)


_LOW32 = np.uint64(0xFFFFFFFF)


def mulhi_unsigned(a: np.ndarray, b: np.ndarray, bits: int) -> np.ndarray:
    """The high half of the 2N-bit product of two N-bit unsigned arrays."""
    if bits <= 32:
        wide = a.astype(np.uint64) * b.astype(np.uint64)
        return (wide >> np.uint64(bits)).astype(a.dtype)
    a, b = a.astype(np.uint64), b.astype(np.uint64)
    s32 = np.uint64(32)
    a_lo, a_hi, b_lo, b_hi = a & _LOW32, a >> s32, b & _LOW32, b >> s32
    hi_lo = a_hi * b_lo
    cross = ((a_lo * b_lo) >> s32) + (hi_lo & _LOW32) + a_lo * b_hi  # < 2**64: no carry lost
    return a_hi * b_hi + (hi_lo >> s32) + (cross >> s32)


def umulhi(x, y):
    """The high half of the 2N-bit product of two N-bit integers, read as unsigned (PTX's mul.hi.u)."""
    check_dtype(INT32_INT64, x, y)
    x, y, dt = operands(x, y)
    if not dt.is_int() or dt.is_bool() or dt.bits < 32:
        raise TypeError(f"tl.umulhi needs 32- or 64-bit integer operands, got {x.dtype} and {y.dtype}")
    shape = broadcast_shape(x.shape, y.shape)
    udt = np.dtype(f"u{dt.bits // 8}")
    a, b = (np.ascontiguousarray(rows_aligned(t, len(shape), dt)).view(udt) for t in (x, y))
    a, b = np.broadcast_arrays(a, b)
    return tensor(mulhi_unsigned(a, b, dt.bits).view(dt.container), dt, shape)


def fdiv(x, y, ieee_rounding=False, approx=False):
    """`approx=True` (Triton 3.9) asks for the GPU's fast fp32 division, within 2 ulp of the
    correctly rounded quotient; here every division is the correctly rounded one."""
    if constexpr_value(approx):
        check_dtype(FP32, x, y)
    x, y = to_tensor(x), to_tensor(y)
    if not x.dtype.is_floating() or not y.dtype.is_floating():
        raise TypeError(f"tl.math.fdiv needs floating-point operands, got {x.dtype} and {y.dtype}")
    return x / y


def div_rn(x, y):
    """Division rounded to nearest even: numpy's IEEE division is exactly that."""
    check_dtype(FP32, x, y)
    return fdiv(x, y, ieee_rounding=True)


sqrt_rn = _float_unary("sqrt_rn", np.sqrt, FP32)  # numpy's sqrt is correctly rounded


def clamp(x, min, max, propagate_nan=PropagateNan.NONE):
    return minimum(maximum(x, min, propagate_nan), max, propagate_nan)


def fma(x, y, z):
    return x * y + z


def where(condition, x, y, *, every_program=False):
    """`every_program`: a control-flow merge, where programs not running now keep their own
    values (otherwise their values are never observed and do not constrain shortcuts)."""
    condition = to_tensor(condition)
    if condition.dtype is not D.int1 and not every_program:
        warnings.warn(f"tl.where with a non-boolean condition is deprecated and will error out in a future triton "
                      f"release. Got {condition.dtype}", UserWarning, stacklevel=2)
    if isinstance(x, tensor) or not isinstance(y, tensor):
        x = to_tensor(x, y if isinstance(y, tensor) else None)
        y = to_tensor(y, x)
    else:
        y = to_tensor(y)
        x = to_tensor(x, y)
    if x.buf is not None or y.buf is not None:
        return FROM_ABOVE["pointer_where"](condition, x, y, every_program)
    decided = _decided(condition, every_program)
    if decided is not None:  # every lane of every program takes the same side (`tl.where(offs < M, offs, 0)`)
        keep = x if decided else y
        dt = D.promote(x.dtype, y.dtype)
        shape = broadcast_shape(broadcast_shape(condition.shape, x.shape), y.shape)
        if keep.dtype is dt:
            return broadcast_to(keep, shape)
    if not condition.shape and x.aff is not None and y.aff is not None and x.dtype is y.dtype \
            and x.shape == y.shape and aligned_steps(x, x.shape) == aligned_steps(y, y.shape):
        # one choice per program between two affine blocks (a divergent branch merging index or
        # pointer blocks): the result stays affine, never materialised
        c = np.where(condition.v.reshape(-1).astype(bool), x.aff[0], y.aff[0])
        return tensor(None, x.dtype, x.shape, aff=(c, aligned_steps(x, x.shape)))
    dt = D.promote(x.dtype, y.dtype)
    shape = broadcast_shape(broadcast_shape(condition.shape, x.shape), y.shape)
    nd = len(shape)
    c, a, b = rows_aligned(condition, nd).astype(bool, copy=False), rows_aligned(x, nd, dt), rows_aligned(y, nd, dt)
    check_lockstep_result(shape, np.dtype(dt.container).itemsize, c, a, b)
    out = fast_loops.select(c, a, b)
    return tensor(np.where(c, a, b) if out is None else out, dt, shape)


def _decided(condition: tensor, every_program=False):
    """True or False when a condition block is the same in every lane of every program (a
    broadcast view from an affine comparison, or a uniform scalar), else None."""
    if condition.aff is not None or condition.lazy is not None:
        return None
    v = condition.v
    if not v.size or any(v.strides[1:]):
        return None
    rows = v.reshape(v.shape[0], -1)[:, 0]
    if not every_program:
        rows, = running_rows((rows,))
    if rows.shape[0] > 1 and not (rows == rows[0]).all():
        return None
    return bool(rows[0])


def swizzle2d(i, j, size_i, size_j, size_g):
    """Renumber a size_i x size_j grid so that consecutive ids walk groups of size_g rows
    column by column (the L2-friendly order of Triton's matmul tutorial)."""
    linear = i * size_j + j
    per_group = size_g * size_j
    first_row = (linear // per_group) * size_g
    rows_here = minimum(size_i - first_row, size_g)
    within = linear % per_group
    return first_row + within % rows_here, within // rows_here


def map_elementwise(scalar_fn, *args, pack=1):
    """`tl.map_elementwise(scalar_fn, *blocks)`: a @jit function of scalars applied to every
    element of the blocks (broadcast to one shape), its control flow taken per element (an
    `if` on a value runs one side for each element, not both as tl.where would).  Each element
    runs as a program of its own: the lockstep executor already takes divergent control flow per
    program, so the function's branches and loops are masked per element.  Returns a block, or a
    tuple of blocks when the function returns several values."""
    if constexpr_value(pack) != 1:
        raise NotImplementedError("tl.map_elementwise with pack != 1 is not supported by minitriton yet")
    if not args:
        raise ValueError("tl.map_elementwise needs at least one block to map over")
    blocks = [to_tensor(a) for a in args]
    shape = ()
    for b in blocks:
        shape = broadcast_shape(shape, b.shape)
    st = context.current()
    n = math.prod(shape)
    rows = st.rows
    scalars = []
    for b in blocks:
        v = np.broadcast_to(b.v.reshape((b.v.shape[0],) + (1,) * (len(shape) - len(b.shape)) + tuple(b.shape)),
                            (rows,) + tuple(shape))
        scalars.append(tensor(np.ascontiguousarray(v).reshape(rows * n), b.dtype, ()))
    sub = context.LaunchState(st.name, st.grid, np.repeat(st.pids, n, axis=0), st.buffers, st.num_warps)
    sub.space = st.space
    if st.active is not None:             # inside a branch: the elements of programs not taking it stay idle
        sub.active = np.repeat(st.active, n)
    context.LOCAL.state = sub
    try:
        out = scalar_fn(*scalars)
    finally:
        context.LOCAL.state = st
        st.writes += sub.writes

    def block(x):
        x = to_tensor(x)
        if x.shape:
            raise TypeError(f"tl.map_elementwise: the mapped function must return scalars, got a block of shape "
                            f"{list(x.shape)}")
        v = np.broadcast_to(x.v.reshape(-1), (rows * n,)).reshape((rows,) + tuple(shape))
        return tensor(np.ascontiguousarray(v), x.dtype, shape)
    return tuple(block(x) for x in out) if isinstance(out, tuple) else block(out)
