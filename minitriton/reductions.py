"""Reductions and scans: sum, max/min (with indices), argmax/argmin, xor_sum, cumsum, softmax."""
from __future__ import annotations

import numpy as np

from . import dtypes as D
from . import fast_loops
from .errors import StaticAssertionError
from .tensor import compile_time_int, tensor, to_tensor, round_to
from .arithmetic import constexpr_value, elementwise_alu
from .elementwise import exp, fdiv


def _reduce_axis(x: tensor, axis, keep_dims):
    if axis is None:
        v = x.v.reshape(x.v.shape[0], -1)
        return v, 1, (() if not keep_dims else (1,) * len(x.shape))
    axis = compile_time_int(axis, "a reduction's axis")
    if not -len(x.shape) <= axis < len(x.shape):
        raise ValueError(f"reduction axis {axis} out of range for a block of shape {list(x.shape)}")
    axis %= len(x.shape)
    shape = list(x.shape)
    if keep_dims:
        shape[axis] = 1
    else:
        del shape[axis]
    return x.v, axis + 1, tuple(shape)


def _reduce(x, axis, keep_dims, fn, dt):
    """Reduce with fn(values, axis); values are in x's container dtype, the result is dt."""
    x = to_tensor(x)
    elementwise_alu(x)
    v, ax, shape = _reduce_axis(x, axis, keep_dims)
    out = fn(v, ax).astype(dt.container, copy=False)
    return tensor(out.reshape((out.shape[0],) + shape), dt, shape)


def _acc_dtype(dt):
    if dt.is_int() and dt.bits < 32:  # as Triton: the same signedness (int1 counts as unsigned)
        return D.int32 if dt.is_signed() else D.uint32
    return D.float32 if dt is D.bfloat16 else dt


def sum(input, axis=None, keep_dims=False, dtype=None):
    x = to_tensor(input)
    dt = constexpr_value(dtype) or _acc_dtype(x.dtype)
    if dt is D.int1:  # one-bit addition: parity, as Triton computes it
        r = _reduce(x, axis, keep_dims, lambda v, a: np.bitwise_and(np.sum(v != 0, axis=a), 1) != 0, dt)
    else:
        r = _reduce(x, axis, keep_dims, lambda v, a: _add(v.astype(dt.container, copy=False), a), dt)
    return tensor(round_to(r.v, dt), dt, r.shape) if dt.is_floating() and dt.bits <= 16 else r


def _extreme_dtype(dt, return_indices):
    """Triton reduces bf16 in fp32, and (without indices) every narrower type in fp32 / int32."""
    if dt is D.bfloat16 or (not return_indices and dt.kind == "f" and dt.bits < 32):
        return D.float32
    if not return_indices and dt.is_int() and dt.bits < 32:
        return D.int32
    return dt


def _add(v, a):
    """np.sum over axis a in v's type: the last axis by a compiled loop when it can."""
    out = fast_loops.row_sum(v) if a == v.ndim - 1 else None
    return np.sum(v, axis=a, dtype=v.dtype) if out is None else out


def _extreme(v, a, largest):
    """fmax / fmin over axis a (NaN only if all are): the last axis by a compiled loop when it can."""
    if a == v.ndim - 1:
        out = fast_loops.row_extreme(v, largest)
        if out is not None:
            return out
    return (np.fmax if largest else np.fmin).reduce(v, axis=a)


def max(input, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False):
    x = to_tensor(input)
    dt = _extreme_dtype(x.dtype, return_indices)
    r = _reduce(x, axis, keep_dims, lambda v, a: _extreme(v, a, True), dt)
    return (r, argmax(x, axis, return_indices_tie_break_left, keep_dims=keep_dims)) if return_indices else r


def min(input, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False):
    x = to_tensor(input)
    dt = _extreme_dtype(x.dtype, return_indices)
    r = _reduce(x, axis, keep_dims, lambda v, a: _extreme(v, a, False), dt)
    return (r, argmin(x, axis, return_indices_tie_break_left, keep_dims=keep_dims)) if return_indices else r


def _arg_extreme(v, a, largest, tie_break_left):
    """The index of the value max/min return: NaNs are passed over unless all are NaN, as
    fmax/fmin pass them over, so a value and its index always belong together; ties go to the
    first index (or the last, without tie_break_left)."""
    if v.dtype.kind == "f":
        nan = np.isnan(v)
        if nan.any():
            v = np.where(nan, -np.inf if largest else np.inf, v)
    pick = np.argmax if largest else np.argmin
    if tie_break_left:
        return pick(v, axis=a).astype(np.int32)
    n = v.shape[a]
    return (n - 1 - pick(np.flip(v, a), axis=a)).astype(np.int32)


def argmax(input, axis, tie_break_left=True, keep_dims=False):
    return _reduce(input, axis, keep_dims, lambda v, a: _arg_extreme(v, a, True, constexpr_value(tie_break_left)), D.int32)


def argmin(input, axis, tie_break_left=True, keep_dims=False):
    return _reduce(input, axis, keep_dims, lambda v, a: _arg_extreme(v, a, False, constexpr_value(tie_break_left)), D.int32)


def _integers_only(x, what):
    if not x.dtype.is_int():
        raise StaticAssertionError(f"static_assert failed: {what} only supported for integers")


def xor_sum(input, axis=None, keep_dims=False):
    x = to_tensor(input)
    _integers_only(x, "xor_sum")
    return _reduce(x, axis, keep_dims, lambda v, a: np.bitwise_xor.reduce(v, axis=a), x.dtype)


def reduce_or(input, axis, keep_dims=False):
    """Bitwise OR along an axis (None: every element), as Triton's standard library has it."""
    x = to_tensor(input)
    _integers_only(x, "reduce_or")
    return _reduce(x, axis, keep_dims, lambda v, a: np.bitwise_or.reduce(v, axis=a), x.dtype)


def cumsum(input, axis=0, reverse=False, dtype=None):
    x = to_tensor(input)
    dt = constexpr_value(dtype) or _acc_dtype(x.dtype)
    ax = compile_time_int(axis, "tl.cumsum's axis") % len(x.shape) + 1
    v = x.v.astype(dt.container)
    if reverse:
        v = np.flip(v, ax)
    out = np.cumsum(v, axis=ax, dtype=dt.container)
    if reverse:
        out = np.flip(out, ax)
    return tensor(round_to(out, dt), dt, x.shape)


def softmax(x, dim=None, keep_dims=False, ieee_rounding=False):
    """Along `dim` (0 when None), as Triton 3.9 computes it.  Triton 3.2-3.8 kept the max and the
    sum's reduced dimension only with `keep_dims`, so along a later dimension without it the row
    of maxima met the block from the right: a shape error, or on a square block a softmax along
    the wrong axis, which 3.9's release notes list as a wrong result fixed.  The result has the
    block's shape either way."""
    axis = constexpr_value(dim)
    axis = 0 if axis is None else axis
    z = to_tensor(x) - max(x, axis, keep_dims=True)
    num = exp(z)
    return fdiv(num, sum(num, axis, keep_dims=True), ieee_rounding)
