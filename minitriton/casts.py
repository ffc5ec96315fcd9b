"""Conversions between element types: `tl.cast` / `x.to(...)`, with fp16/bf16 results rounded
once when first used (a store into a half-precision argument takes the fp32 values)."""
from __future__ import annotations

import numpy as np

from . import context
from . import dtypes as D
from .tensor import FROM_ABOVE, POOL, tensor, to_tensor, round_to
from .arithmetic import constexpr_value


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


def cast(x, dtype, bitcast=False, **_):
    x = to_tensor(x)
    dtype = constexpr_value(dtype)
    if x.buf is not None or isinstance(dtype, D.pointer_type):
        return FROM_ABOVE["cast_from_pointer" if x.buf is not None else "cast_to_pointer"](x, dtype)
    if x.dtype is dtype:
        return x
    if bitcast:
        if x.dtype.bits != dtype.bits:
            raise ValueError(f"bitcast needs equal bit widths, got {x.dtype} -> {dtype}")
        storage = x.v.astype(x.dtype.np) if x.dtype.container != x.dtype.np else x.v
        return tensor(np.ascontiguousarray(storage).view(dtype.np).astype(dtype.container, copy=False), dtype, x.shape)
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
    if x.aff is not None and dtype.is_int() and not dtype.is_bool():
        return tensor(None, dtype, x.shape, aff=x.aff)
    return tensor(out, dtype, x.shape)


tensor.to = lambda self, dtype, bitcast=False, **_: cast(self, dtype, bitcast=bitcast)
