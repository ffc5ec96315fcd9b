"""Conversions between element types: `tl.cast` / `x.to(...)`, with fp16/bf16 results rounded
once when first used (a store into a half-precision argument takes the fp32 values)."""
from __future__ import annotations

import numpy as np

from . import context
from . import creation
from . import dtypes as D
from .tensor import FROM_ABOVE, POOL, tensor, to_tensor, round_to
from .arithmetic import constexpr_value
from .affine import fits


class Rounding:
    """fp32 values rounded to fp16/bf16 when first used.  A store into a half-precision
    argument takes the fp32 values and rounds them once, as it converts them for memory."""

    __slots__ = ("src", "dtype", "rows", "live")

    def __init__(self, src, dtype):
        self.src, self.dtype, self.rows = src, dtype, src.rows
        st = context.LOCAL.__dict__.get("state")
        live = st.active if st is not None else None
        # programs not running now never observe this value: only the others' rows are rounded
        self.live = live if live is not None and live.shape[0] == self.rows and live.sum() * 2 < self.rows else None

    def evaluate(self):
        v = self.src.v
        if self.live is None:
            return round_to(v, self.dtype)
        out = POOL.empty(v.shape, np.float32)  # the other rows are never observed
        out[self.live] = round_to(v[self.live], self.dtype)
        return out


ROUNDINGS = ("rtne", "rtz")


def toward_zero(v: np.ndarray, dtype) -> np.ndarray:
    """Float values rounded toward zero to `dtype` (in its container): the nearest value, moved
    one step toward zero where it lies farther from zero than the value (a finite value that
    rounds to infinity becomes the largest finite one).  Floats are sign and magnitude, so one
    step toward zero is one less in the magnitude's bits."""
    wide = v.astype(np.float64, copy=False)
    near = round_to(v.astype(np.float64 if dtype is D.float64 else np.float32, copy=False), dtype)
    away = np.isfinite(wide) & (np.abs(near.astype(np.float64)) > np.abs(wide))
    bits = np.ascontiguousarray(dtype.encode(near)).view(f"u{dtype.bits // 8}").copy()
    bits[away] -= 1
    return dtype.decode(bits.view(dtype.np))


def cast(x, dtype, fp_downcast_rounding=None, bitcast=False, **_):
    x = to_tensor(x)
    dtype = constexpr_value(dtype)
    fp_downcast_rounding = constexpr_value(fp_downcast_rounding)
    if x.buf is not None or isinstance(dtype, D.pointer_type):
        return FROM_ABOVE["cast_from_pointer" if x.buf is not None else "cast_to_pointer"](x, dtype)
    if fp_downcast_rounding is not None:
        if fp_downcast_rounding not in ROUNDINGS:
            raise ValueError(f"fp_downcast_rounding must be one of {ROUNDINGS}, got {fp_downcast_rounding!r}")
        if bitcast or not (x.dtype.is_floating() and dtype.is_floating() and dtype.bits < x.dtype.bits):
            raise ValueError("fp_downcast_rounding should be set only for truncating fp conversions: source "
                             f"type is {x.dtype} and destination type is {dtype}")
        if fp_downcast_rounding == "rtz":
            return tensor(toward_zero(x.v, dtype), dtype, x.shape)
    if x.dtype is dtype:
        return x
    if not bitcast and (x.dtype.is_storage_only() or dtype.is_storage_only()):
        raise TypeError(f"cannot cast {x.dtype} to {dtype}: {x.dtype if x.dtype.is_storage_only() else dtype} is "
                        f"a storage-only type; bitcast it (as in Triton)")
    if bitcast:
        if x.dtype.bits != dtype.bits:
            raise ValueError(f"bitcast needs equal bit widths, got {x.dtype} -> {dtype}")
        storage = x.dtype.encode(x.v) if x.dtype.container != x.dtype.np else x.v
        return tensor(dtype.decode(np.ascontiguousarray(storage).view(dtype.np)), dtype, x.shape)
    if dtype.bits == 16 and dtype.is_floating() and x.dtype is D.float32:
        return tensor.deferred(Rounding(x, dtype), dtype, x.shape)
    v = x.v
    if dtype.is_bool():
        out = v != 0
    elif dtype.is_floating():
        out = round_to(v.astype(np.float64 if dtype is D.float64 else np.float32, copy=False), dtype)
    else:
        with np.errstate(all="ignore"):
            src = np.trunc(v) if x.dtype.is_floating() else v
            out = src.astype(dtype.np)
    if x.aff is not None and dtype.is_int() and not dtype.is_bool() and fits(dtype, x.aff, x.shape):
        return tensor(None, dtype, x.shape, aff=x.aff)      # (a value that wraps is no longer affine)
    return tensor(out, dtype, x.shape)


tensor.to = lambda self, dtype, fp_downcast_rounding=None, bitcast=False, **_: \
    cast(self, dtype, fp_downcast_rounding=fp_downcast_rounding, bitcast=bitcast)


def full(shape, value, dtype):
    """`tl.full`.  The value may be a runtime scalar (a kernel argument, a loaded element): it is
    converted to `dtype` by Triton's cast rules and then fills the block, as Triton's splat does."""
    if not isinstance(value, tensor):
        return creation.full(shape, value, dtype)
    if value.shape:
        raise ValueError(f"tl.full: value must be a scalar, got a block of shape {list(value.shape)}")
    shape = creation.full(shape, 0, dtype).shape        # the same checks on `shape` and `dtype`
    v = cast(value, constexpr_value(dtype)).v
    return tensor(np.broadcast_to(v.reshape((v.shape[0],) + (1,) * len(shape)), (v.shape[0],) + shape),
                  constexpr_value(dtype), shape)
