"""Block pointers: `tl.make_block_ptr`, `tl.advance`, and loads and stores through them with
`boundary_check` and `padding_option`.

A block pointer describes a tile of a strided N-d array (base, shape, strides, the tile's
offsets and its block shape).  Loading one is loading the ordinary pointer block
``base + sum_d (offset_d + arange(block_d)) * stride_d`` under the mask of the checked
dimensions, so it shares every path (lockstep, strided views, masks) with plain pointers;
when every program's tile lies inside the checked bounds the mask is dropped and the load
stays a strided view.
"""
from __future__ import annotations

import numpy as np

from .dtypes import constexpr_value
from .tensor import tensor, to_tensor
from .creation import arange
from .shapes import broadcast_to


class block_pointer:
    """The value `tl.make_block_ptr` returns (Triton calls its type `pointer_type<block_type>`)."""

    def __init__(self, base, shape, strides, offsets, block_shape, order):
        self.base, self.shape, self.strides = base, shape, strides
        self.offsets, self.block_shape, self.order = offsets, block_shape, order

    @property
    def dtype(self):
        return self.base.dtype

    @property
    def type(self):
        return self.base.dtype

    def __repr__(self):
        return f"block_pointer({self.base.dtype}, block_shape={list(self.block_shape)})"

    def advance(self, offsets):
        return advance(self, offsets)


def integer_list(values, n, what, caller="tl.make_block_ptr"):
    """`values` as a list of n integers (Python ints or integer scalar blocks), or a clear error
    naming `caller` and `what` (block pointers' and tensor descriptors' shapes, strides, offsets)."""
    values = constexpr_value(values)
    if not isinstance(values, (tuple, list)):
        values = [values]
    if len(values) != n:
        raise ValueError(f"{caller}: {what} must be a list of {n} values (one per dimension), got {values!r}")
    out = []
    for v in values:
        v = constexpr_value(v)
        if isinstance(v, tensor):
            if v.shape or not v.dtype.is_int():
                raise TypeError(f"{caller}: {what} must be integer scalars, got {v!r}")
        elif not isinstance(v, (int, np.integer)) or isinstance(v, bool):
            raise TypeError(f"{caller}: {what} must be integers, got {v!r}")
        out.append(v)
    return out


def make_block_ptr(base, shape, strides, offsets, block_shape, order):
    if not isinstance(base, tensor) or base.buf is None or base.shape:
        raise TypeError(f"tl.make_block_ptr: base must be a scalar pointer (an array argument), got {base!r}")
    block_shape = [int(constexpr_value(b)) for b in constexpr_value(block_shape)]
    n = len(block_shape)
    for b in block_shape:
        if b <= 0 or b & (b - 1):
            raise ValueError(f"tl.make_block_ptr: block_shape must be powers of 2, got {block_shape}")
    order = [int(constexpr_value(o)) for o in constexpr_value(order)]
    if sorted(order) != list(range(n)):
        raise ValueError(f"tl.make_block_ptr: order must be a permutation of range({n}), got {order}")
    return block_pointer(base, integer_list(shape, n, "shape"), integer_list(strides, n, "strides"),
                         integer_list(offsets, n, "offsets"), block_shape, order)


def advance(base, offsets):
    if not isinstance(base, block_pointer):
        raise TypeError(f"tl.advance needs a block pointer from tl.make_block_ptr, got {base!r}")
    deltas = integer_list(offsets, len(base.block_shape), "offsets", "tl.advance")
    moved = [o + d for o, d in zip(base.offsets, deltas)]
    return block_pointer(base.base, base.shape, base.strides, moved, base.block_shape, base.order)


def _index(dim, n, rank):
    """arange(0, n) laid along dimension `dim` of a rank-`rank` block."""
    return arange(0, n)[(None,) * dim + (slice(None),) + (None,) * (rank - dim - 1)]


def _inside(lo, n, size) -> bool:
    """Whether [lo, lo + n) lies inside [0, size) for every program (ints or scalar tensors)."""
    lo_v = np.asarray(lo.v if isinstance(lo, tensor) else lo).reshape(-1)
    size_v = np.asarray(size.v if isinstance(size, tensor) else size).reshape(-1)
    return bool((lo_v >= 0).all() and (lo_v.max() + n <= size_v.min()))


def _check_dims(bp, boundary_check, what):
    dims = sorted({int(constexpr_value(d)) for d in (constexpr_value(boundary_check) or ())})
    for d in dims:
        if not 0 <= d < len(bp.block_shape):
            raise ValueError(f"tl.{what}: boundary_check dimension {d} is out of range for a "
                             f"{len(bp.block_shape)}-d block pointer")
    return dims


def pointers_and_mask(bp: block_pointer, boundary_check, what):
    """The ordinary pointer block a block pointer addresses, and the mask of its checked bounds."""
    rank = len(bp.block_shape)
    ptr, mask = bp.base, None
    for d, n in enumerate(bp.block_shape):
        idx = bp.offsets[d] + _index(d, n, rank)
        ptr = ptr + idx * bp.strides[d]
    for d in _check_dims(bp, boundary_check, what):
        if _inside(bp.offsets[d], bp.block_shape[d], bp.shape[d]):
            continue
        idx = bp.offsets[d] + _index(d, bp.block_shape[d], rank)
        inside = (idx >= 0) & (idx < bp.shape[d])
        mask = inside if mask is None else mask & inside
    if len(ptr.shape) != rank:
        ptr = broadcast_to(ptr, tuple(bp.block_shape))
    return ptr, mask


def padding(bp: block_pointer, padding_option):
    option = constexpr_value(padding_option) or ""
    if option not in ("", "zero", "nan"):
        raise ValueError(f"tl.load: padding_option must be 'zero' or 'nan', got {option!r}")
    if option == "nan":
        if not bp.dtype.element_ty.is_floating():
            raise ValueError("tl.load: padding_option='nan' needs a floating-point block pointer")
        return float("nan")
    return None
