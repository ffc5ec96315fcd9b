"""Shape and layout: indexing with None and slices, expand_dims, reshape/view, broadcast_to,
ravel, permute/trans, swizzle2d, and joining blocks along an axis."""
from __future__ import annotations

import builtins
import math

import numpy as np

from . import boxes
from .tensor import Slice, broadcast_shape, compile_time_int, shape_element, tensor, to_tensor
from .affine import aligned_steps
from .arithmetic import constexpr_value, rows_aligned


def _getitem(x: tensor, idx):
    if not isinstance(idx, tuple):
        idx = (idx,)
    idx = tuple(i.as_slice() if isinstance(i, Slice) else i for i in idx)
    if builtins.sum(i is Ellipsis for i in idx) > 1:
        raise IndexError("at most one ... in a block index")
    if Ellipsis in idx:
        k = idx.index(Ellipsis)
        fill = len(x.shape) - (len(idx) - 1 - builtins.sum(i is None for i in idx))
        idx = idx[:k] + (slice(None),) * fill + idx[k + 1:]
    shape, steps, sources, d = [], [], [], 0
    for i in idx:
        if i is None:
            shape.append(1)
            steps.append(0)
            sources.append(None)
        elif isinstance(i, slice) and i == slice(None):
            if d >= len(x.shape):   # Triton lets a ':' past the last dimension through
                continue
            shape.append(x.shape[d])
            steps.append(x.aff[1][d] if x.aff is not None else 0)
            sources.append(d)
            d += 1
        else:
            raise IndexError(f"unsupported tensor index: {i!r}; blocks can only be indexed with None and ':' "
                             f"(e.g. x[:, None])")
    sources += range(d, len(x.shape))
    shape += x.shape[d:]
    if x.box is not None and x._v is None:     # a box mask (boxes.py) stays one: `(rows < M)[:, None]`
        return boxes.reindexed(x, sources, tuple(shape))
    if x.aff is not None:
        steps += list(x.aff[1][d:])
    return _with_shape(x, tuple(shape), tuple(steps))


def _with_shape(x: tensor, shape, steps=None):
    if x.aff is not None and steps is not None:
        return tensor(None, x.dtype, shape, aff=(x.aff[0], steps), buf=x.buf)
    v = x.v
    return tensor(v.reshape((v.shape[0],) + shape), x.dtype, shape, buf=x.buf)


def expand_dims(x, axis):
    x = to_tensor(x)                # a number is a 0-d tensor here, as in Triton
    axis = constexpr_value(axis)
    ndim = len(x.shape) + (len(axis) if isinstance(axis, (tuple, list)) else 1)
    axes = []
    for a in (axis if isinstance(axis, (tuple, list)) else [axis]):
        a = constexpr_value(a)
        if isinstance(a, bool) or not isinstance(a, (int, np.integer)) or not -ndim <= a < ndim:
            raise ValueError(f"expand_dims: invalid axis {a!r}; expected an int with {-ndim} <= axis < {ndim}")
        axes.append(int(a) % ndim)
    if len(set(axes)) != len(axes):
        raise ValueError(f"expand_dims received duplicate axes, normalized axes = {axes}")
    axes.sort()
    shape, steps = list(x.shape), list(x.aff[1]) if x.aff is not None else None
    for a in axes:
        shape.insert(a, 1)
        if steps is not None:
            steps.insert(a, 0)
    return _with_shape(x, tuple(shape), tuple(steps) if steps is not None else None)


def unsqueeze(x, dim):
    """A length-1 dimension inserted at `dim` (Triton's inverse of squeeze; expand_dims)."""
    return expand_dims(x, dim)


def squeeze(x, dim):
    """The length-1 dimension `dim` removed; a longer one is refused, as Triton checks it when it
    compiles."""
    x = to_tensor(x)
    dim, ndim = constexpr_value(dim), len(x.shape)
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or not -ndim <= dim < ndim:
        raise ValueError(f"squeeze: invalid dim {dim!r} for a block of shape {list(x.shape)}")
    dim = int(dim) % ndim
    if x.shape[dim] != 1:
        raise ValueError(f"squeeze: dimension {dim} of a block of shape {list(x.shape)} has length "
                         f"{x.shape[dim]}, not 1")
    steps = (x.aff[1][:dim] + x.aff[1][dim + 1:]) if x.aff is not None else None
    return _with_shape(x, x.shape[:dim] + x.shape[dim + 1:], steps)


def reshape(x, *shape, can_reorder=False):
    """`tl.reshape(x, (a, b))` or `tl.reshape(x, a, b)`, as Triton takes either."""
    if len(shape) == 1 and isinstance(constexpr_value(shape[0]), (tuple, list)):
        shape = constexpr_value(shape[0])
    shape = tuple(shape_element(s, i) for i, s in enumerate(shape))
    if math.prod(shape) != x.numel:
        raise ValueError(f"cannot reshape a block of shape {list(x.shape)} to {list(shape)}")
    return _with_shape(x, shape)


view = reshape


def item(x):
    """A one-element block's value as a scalar (Triton's `x.item()`, and what its `if` does with
    a one-element condition)."""
    x = to_tensor(x)
    if not x.shape:
        return x
    if x.numel != 1:
        raise ValueError(f"item() needs a block of one element, got one of shape {list(x.shape)}")
    return _with_shape(x, ())


def broadcast_to(x, *shape):
    shape = tuple(shape_element(s, i) for i, s in enumerate(shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape))
    x = to_tensor(x)
    if tuple(x.shape) == shape:
        return x
    try:
        full_shape = broadcast_shape(x.shape, shape)
    except ValueError:
        full_shape = None
    if full_shape != shape:
        raise ValueError(f"cannot broadcast a block of shape {list(x.shape)} to {list(shape)}")
    if x.aff is not None:
        return tensor(None, x.dtype, shape, aff=(x.aff[0], aligned_steps(x, shape)), buf=x.buf)
    v = rows_aligned(x, len(shape))
    return tensor(np.broadcast_to(v, (v.shape[0],) + shape), x.dtype, shape, buf=x.buf)


def ravel(x, can_reorder=False):
    return reshape(x, (x.numel,))


def broadcast(x, y):
    shape = broadcast_shape(to_tensor(x).shape, to_tensor(y).shape)
    return broadcast_to(x, shape), broadcast_to(y, shape)


def permute(x, *dims):
    dims = tuple(compile_time_int(d, "tl.permute's dims") for d in (dims[0] if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims))
    if sorted(dims) != list(range(len(x.shape))):
        raise ValueError(f"permute dims {list(dims)} do not match a block of rank {len(x.shape)}")
    shape = tuple(x.shape[d] for d in dims)
    if x.aff is not None:
        return tensor(None, x.dtype, shape, aff=(x.aff[0], tuple(x.aff[1][d] for d in dims)), buf=x.buf)
    return tensor(x.v.transpose((0,) + tuple(d + 1 for d in dims)), x.dtype, shape, buf=x.buf)


def trans(x, *dims):
    if not dims:
        if len(x.shape) < 2:
            raise ValueError(f"tl.trans needs a block of rank >= 2, got {list(x.shape)}")
        dims = tuple(range(len(x.shape) - 2)) + (len(x.shape) - 1, len(x.shape) - 2)
    return permute(x, *dims)


tensor.__getitem__ = _getitem
tensor.T = property(lambda self: trans(self))
tensor.reshape = lambda self, *shape, **kw: reshape(self, *shape, **kw)
