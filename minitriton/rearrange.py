"""Operations that move elements within a block: flip, sort, topk, gather, histogram, and the
join / split / interleave / cat family that pairs blocks up or takes them apart.

Each works on every program's row at once (the leading axis of a tensor's values).
"""
from __future__ import annotations

import numpy as np

from .dtypes import constexpr_value
from . import dtypes as D, context
from .tensor import tensor, to_tensor
from .user_reductions import concat
from .arithmetic import operands
from .shapes import broadcast_to, broadcast


def _axis(x: tensor, dim, what, default_last=True):
    if not x.shape:
        raise ValueError(f"tl.{what} needs a block, not a scalar")
    dim = constexpr_value(dim)
    if dim is None:
        if not default_last and len(x.shape) != 1:
            raise ValueError(f"tl.{what} needs dim= for a block of rank {len(x.shape)}")
        return len(x.shape) - 1
    dim = int(dim)
    if not -len(x.shape) <= dim < len(x.shape):
        raise ValueError(f"tl.{what}: dim {dim} is out of range for a block of shape {list(x.shape)}")
    return dim % len(x.shape)


def flip(x, dim=None):
    x = to_tensor(x)
    ax = _axis(x, dim, "flip")
    return tensor(np.flip(x.v, ax + 1), x.dtype, x.shape)


def _sorted(x: tensor, dim, descending, what):
    ax = _axis(x, dim, what)
    if ax != len(x.shape) - 1:
        raise ValueError(f"tl.{what} sorts along the last dimension only (as Triton), got dim={dim}")
    v = np.sort(x.v, axis=-1)
    return np.flip(v, -1) if constexpr_value(descending) else v


def sort(x, dim=None, descending=False):
    x = to_tensor(x)
    return tensor(np.ascontiguousarray(_sorted(x, dim, descending, "sort")), x.dtype, x.shape)


def topk(x, k, dim=None, descending=True):
    """The k largest elements along the last dimension, largest first (the k smallest, smallest
    first, with descending=False), as Triton's tl.topk."""
    x = to_tensor(x)
    k = int(constexpr_value(k))
    if not 1 <= k <= x.shape[-1] or k & (k - 1):
        raise ValueError(f"tl.topk: k={k} must be a power of 2 between 1 and the last dimension {x.shape[-1]} "
                         f"(its result is a block, and Triton refuses another k since 3.9)")
    v = np.ascontiguousarray(_sorted(x, dim, bool(constexpr_value(descending)), "topk")[..., :k])
    return tensor(v, x.dtype, x.shape[:-1] + (k,))


def bitonic_merge(x, dim=None, descending=False):
    """The merge network of Triton's bitonic sort on its own, along the last dimension (n = 2**k
    lanes): k rounds of compare-and-swap, lanes n/2 apart first, then n/4, ...; a pair is
    swapped when (left > right) differs from `descending`.  A bitonic input comes out sorted;
    any other input comes out as Triton's network leaves it (not sorted), and a NaN is never
    swapped, since no comparison with it holds."""
    x = to_tensor(x)
    ax = _axis(x, dim, "bitonic_merge")
    if ax != len(x.shape) - 1:
        raise ValueError(f"tl.bitonic_merge merges along the last dimension only (as Triton), got dim={dim}")
    n = x.shape[-1]
    flip = bool(constexpr_value(descending))
    v = x.v
    for step in range(n.bit_length() - 1):
        pairs = v.reshape(v.shape[:-1] + (1 << step, 2, n >> (step + 1)))
        left, right = pairs[..., 0, :], pairs[..., 1, :]
        swap = (left > right) != flip
        v = np.stack([np.where(swap, right, left), np.where(swap, left, right)], axis=-2).reshape(v.shape)
    return tensor(np.ascontiguousarray(v), x.dtype, x.shape)


def gather(src, index, axis):
    """out[..., i, ...] = src[..., index[..., i, ...], ...] along `axis` (numpy's take_along_axis)."""
    src, index = to_tensor(src), to_tensor(index)
    ax = _axis(src, axis, "gather")
    if not index.dtype.is_int() or len(index.shape) != len(src.shape):
        raise TypeError(f"tl.gather: index must be an integer block of the same rank as src, got "
                        f"{index.dtype} {list(index.shape)}")
    rows = max(src.rows, index.rows)
    idx = np.broadcast_to(index.v.astype(np.int64), (rows,) + index.shape)
    n = src.shape[ax]
    bad = (idx < 0) | (idx >= n)
    active = context.current().active
    if active is not None and active.shape[0] == rows:  # programs not running have no say
        bad &= active.reshape((rows,) + (1,) * len(index.shape))
        idx = np.clip(idx, 0, n - 1)
    if bad.any():
        raise IndexError(f"tl.gather: index {int(idx[bad][0])} out of range [0, {n}) along axis {ax}")
    sv = np.broadcast_to(src.v, (rows,) + src.v.shape[1:])
    return tensor(np.take_along_axis(sv, idx, axis=ax + 1), src.dtype, index.shape)


WARP_LANES = 32      # an NVIDIA warp: the histogram's bins are padded to one bin per lane


def histogram(input, num_bins, mask=None):
    """Counts of the values 0 .. num_bins-1 (int32); masked-off lanes are not counted.  A value
    outside the bins counts as the A100 modelled counts it: Triton's lowering reads only the low
    log2(max(num_bins, 32)) bits of each value (one warp ballot per bit, the bins padded to a warp's
    32 lanes), so it lands in the bin those bits name and is dropped when that bin is a padding
    one (Triton's test_histogram_silent_data_corruption: 1 in a 1-bin histogram counts nothing)."""
    x = to_tensor(input)
    num_bins = int(constexpr_value(num_bins))
    if not x.dtype.is_int() or len(x.shape) != 1:
        raise TypeError(f"tl.histogram needs a 1-D integer block, got {x.dtype} {list(x.shape)}")
    if x.dtype.bits != 32:      # Triton's lowering reads 32-bit lanes; 3.9 refuses another width
        raise ValueError(f"tl.histogram needs 32-bit integers (int32 or uint32), got {x.dtype}")
    parts = [x.v.astype(np.int64)]
    if mask is not None:
        parts.append(broadcast_to(to_tensor(mask), x.shape).v.astype(bool))
    active = context.current().active
    if active is not None:
        parts.append(active[:, None])
    rows = max(p.shape[0] for p in parts)
    v = np.broadcast_to(parts[0], (rows,) + x.shape)
    keep = np.ones(v.shape, bool)
    for p in parts[1:]:
        keep = keep & p
    if num_bins < 1 or num_bins & (num_bins - 1):
        raise ValueError(f"tl.histogram: num_bins must be a power of two, got {num_bins}")
    v = v & (max(num_bins, WARP_LANES) - 1)
    keep = keep & (v < num_bins)
    flat = (v + np.arange(rows)[:, None] * num_bins)[keep]
    counts = np.bincount(flat, minlength=rows * num_bins).reshape(rows, num_bins).astype(np.int32)
    return tensor(counts, D.int32, (num_bins,))


def join(a, b):
    """A new minor dimension of size 2: out[..., 0] = a, out[..., 1] = b."""
    a, b, dt = operands(a, b)
    a, b = broadcast(a.to(dt), b.to(dt))
    rows = max(a.rows, b.rows)
    v = np.stack([np.broadcast_to(a.v, (rows,) + a.v.shape[1:]), np.broadcast_to(b.v, (rows,) + b.v.shape[1:])],
                 axis=-1)
    return tensor(v, dt, a.shape + (2,))


def split(a):
    a = to_tensor(a)
    if not a.shape or a.shape[-1] != 2:
        raise ValueError(f"tl.split needs a block whose last dimension is 2, got shape {list(a.shape)}")
    return (tensor(np.ascontiguousarray(a.v[..., 0]), a.dtype, a.shape[:-1]),
            tensor(np.ascontiguousarray(a.v[..., 1]), a.dtype, a.shape[:-1]))


def interleave(a, b):
    """Alternating elements of a and b along the last dimension."""
    c = join(a, b)
    shape = c.shape[:-2] + (2 * c.shape[-2],) if len(c.shape) > 1 else (2,)
    return tensor(c.v.reshape((c.rows,) + shape), c.dtype, shape)


def cat(input, other, can_reorder=False, dim=0):
    """`can_reorder=True`: two 1-D blocks of one shape joined in any order (here, in order).
    `can_reorder=False` (Triton 3.7 on; before, refused): the two blocks broadcast to one shape and
    joined in order along `dim`, doubling it."""
    a, b, dt = operands(input, other)
    if constexpr_value(can_reorder):
        if len(a.shape) != 1 or len(b.shape) != 1:
            raise ValueError(f"tl.cat joins 1-D blocks (as Triton), got {list(a.shape)} and {list(b.shape)}")
        if a.shape != b.shape:
            raise ValueError(f"tl.cat: the blocks must have the same shape, got {list(a.shape)} and {list(b.shape)}")
        return concat([a.to(dt), b.to(dt)], 0)
    a, b = broadcast(a.to(dt), b.to(dt))
    dim = constexpr_value(dim)
    if not a.shape or isinstance(dim, bool) or not isinstance(dim, int) or not -len(a.shape) <= dim < len(a.shape):
        raise ValueError(f"tl.cat: dim must be an axis of the blocks' shape {list(a.shape)}, got {dim!r}")
    return concat([a, b], dim % len(a.shape))
