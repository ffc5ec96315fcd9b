"""The blocks a kernel makes from nothing: program ids, `arange`, `full` and `zeros`, and
`cdiv` (Triton's checks on their arguments: power-of-two shapes, the block size limit, valid
grid axes)."""
from __future__ import annotations

import math

import numpy as np

from . import context
from .arithmetic import constexpr_value
from .tensor import MAX_BLOCK_NUMEL, shape_element, tensor, to_tensor
from . import dtypes as D


def _grid_axis(axis, what):
    axis = constexpr_value(axis)
    if isinstance(axis, bool) or axis not in (0, 1, 2):
        raise ValueError(f"{what} axis must be 0, 1, or 2 but got {axis!r}")
    return int(axis)


def program_id(axis, bitwidth=None):
    """`bitwidth=64` gives the id as int64 (newer Triton's option, for grids whose index
    arithmetic would overflow int32); 32, or None, as int32."""
    width = constexpr_value(bitwidth)
    if width is not None and (isinstance(width, bool) or width not in (32, 64)):
        raise ValueError(f"program_id bitwidth must be 32 or 64, got {width!r}")
    dtype = D.int64 if width == 64 else D.int32
    return tensor(None, dtype, (), aff=(context.current().program_ids(_grid_axis(axis, "program_id")), ()))


def num_programs(axis):
    return to_tensor(context.current().grid[_grid_axis(axis, "num_programs")])


def arange(start, end):
    start, end = constexpr_value(start), constexpr_value(end)
    if not isinstance(start, (int, np.integer)) or not isinstance(end, (int, np.integer)):
        raise TypeError(f"tl.arange needs constexpr int bounds, got {start!r} and {end!r}")
    n = int(end) - int(start)
    if n <= 0 or n & (n - 1):
        raise _noted(ValueError("arange's range must be a power of 2"), f"(tl.arange({start}, {end}) has length {n})")
    if n > MAX_BLOCK_NUMEL:
        raise ValueError(f"tl.arange({start}, {end}) has {n:,} elements, more than Triton's limit of "
                         f"{MAX_BLOCK_NUMEL:,} per block (TRITON_MAX_TENSOR_NUMEL)")
    return tensor(None, D.int32, (n,), aff=(np.array([int(start)], np.int64), (1,)))


def _noted(error: Exception, detail: str) -> Exception:
    """Triton's message as the error's own (code written for Triton compares it), ours beside it."""
    error.add_note(detail)
    return error


def _shape_arg(shape):
    shape = constexpr_value(shape)
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    shape = tuple(shape_element(s, i) for i, s in enumerate(shape))
    for i, s in enumerate(shape):
        if s <= 0 or s & (s - 1):
            raise _noted(ValueError(f"Shape element {i} must be a power of 2"),
                         f"(block dimensions must be powers of 2, got shape {list(shape)})")
    if math.prod(shape) > MAX_BLOCK_NUMEL:
        raise ValueError(f"a block of shape {list(shape)} has {math.prod(shape):,} elements, more than Triton's limit "
                         f"of {MAX_BLOCK_NUMEL:,} (TRITON_MAX_TENSOR_NUMEL)")
    return shape


def full(shape, value, dtype):
    shape, dtype = _shape_arg(shape), constexpr_value(dtype)
    v = np.broadcast_to(np.asarray(value, dtype.container).reshape((1,) * (len(shape) + 1)), (1,) + shape)
    return tensor(v, dtype, shape)


def zeros(shape, dtype):
    return full(shape, 0, dtype)


def zeros_like(x):
    return zeros(x.shape, x.dtype)


def full_like(x, value):
    return full(x.shape, value, x.dtype)


def cdiv(x, div):
    return (x + div - 1) // div
