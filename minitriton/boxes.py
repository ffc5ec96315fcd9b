"""Boolean masks that keep one box of lanes in each program, kept as the box's bounds.

A tiled kernel masks its edge tiles with

    mask = (rows[:, None] < M) & (cols[None, :] < N)

Built lane by lane, that is a block of booleans per program (a 1000 x 700 transpose in 32 x 32
tiles: 720,000 of them), which the masked load then scans again to find each program's window.
But each compare keeps a run of lanes along the one axis its affine block steps on, and `&` of
such runs is a box: per program and axis, the lanes [lo, hi) (tensor.box).  Here the compare and
the `&` compute those bounds, a few integers per program; a load or store through an affine
pointer reads them as its windows (gathers.masked_boxes), and anything else that asks for the
lanes gets them built from the bounds (tensor.box_values), the same booleans the compare and `&`
would have given.

Only where the answer is exact: a signed block whose lanes all fit its type (no wrap-around),
compared with a scalar (one per program, or one for all) by <, <=, >, >= or ==.  Everything else
takes arithmetic.binary's general path, as before.
"""
from __future__ import annotations

import math

import numpy as np

from . import dtypes as D
from .affine import FLIPPED, affine_bounds
from .tensor import broadcast_shape, tensor

_enabled = True
# Masked loads and stores of fewer lanes than ACCESS_LANES (over all programs) go lane by lane
# (memory.py): their few array operations cost less than finding and grouping boxes (a masked
# vector add of 8 blocks of 128: 510 -> 300 us a launch); from about this size on, the boxes'
# windows pay.  A compare is kept as bounds when its own lanes reach ACCESS_LANES, or MIN_LANES
# for one with an axis of one lane (`rows[:, None] < M`), which `&` widens to a tile's lanes.
# Both measured on masked vector adds and transposes from 256 to 262,144 lanes.
ACCESS_LANES = 1 << 15
MIN_LANES = 1 << 13


def set_enabled(on: bool) -> bool:
    """Switch box masks (tests compare both ways); returns the previous setting."""
    global _enabled
    prev, _enabled = _enabled, bool(on)
    return prev


def _clipped(x, n):
    """x limited to [0, n] (np.clip's own overhead is most of the cost at these sizes)."""
    return np.minimum(np.maximum(x, 0), n)


def _below(c, s, k, n):
    """[lo, hi) of the lanes i in [0, n) with c + s*i < k (c, k: per program; s != 0)."""
    if s > 0:
        return np.zeros_like(c), _clipped(-((c - k) // s), n)         # i < (k - c) / s, rounded up
    return _clipped((c - k) // -s + 1, n), np.full_like(c, n)         # i > (c - k) / |s|


def _emptied(lo, hi):
    """Fresh bounds (rows, axes) with a program that keeps no lane of some axis keeping none of
    any: one form for "nothing", so that equal bounds are equal masks."""
    empty = (hi <= lo).any(axis=1)
    if empty.any():
        lo[empty] = hi[empty] = 0
    return lo, hi


def _boxed(lo, hi, d, shape):
    """Bounds on every axis from those on axis d (the others whole)."""
    rows = lo.shape[0]
    lo_all = np.zeros((rows, len(shape)), np.int64)
    hi_all = np.empty((rows, len(shape)), np.int64)
    hi_all[:] = shape
    lo_all[:, d], hi_all[:, d] = lo, hi
    return _emptied(lo_all, hi_all)


def box_compare(a: tensor, b: tensor, op: str, shape, dt):
    """`a op b` as a box mask when one side is an affine block stepping along one axis only and
    the other a scalar, compared in the signed type dt with every lane inside dt's range; else
    None."""
    if not _enabled or op == "ne":
        return None
    if b.shape and not a.shape:
        a, b, op = b, a, FLIPPED[op]
    if a.aff is None or b.aff is None or b.shape or not a.shape or tuple(a.shape) != tuple(shape):
        return None
    c, steps = a.aff
    if max(c.shape[0], b.aff[0].shape[0]) * math.prod(shape) < (MIN_LANES if 1 in shape else ACCESS_LANES):
        return None
    axes = [d for d, (s, n) in enumerate(zip(steps, shape)) if s and n > 1]
    if len(axes) != 1:
        return None
    lo_v, hi_v = affine_bounds(a)
    least, most = D.int_range(dt)
    if int(lo_v.min()) < least or int(hi_v.max()) > most:
        return None
    d = axes[0]
    s, n = int(steps[d]), shape[d]
    rows = max(c.shape[0], b.aff[0].shape[0])
    c = np.broadcast_to(c, (rows,))
    k = np.broadcast_to(b.aff[0], (rows,))
    if op == "eq":
        i = (k - c) // s
        hit = (c + s * i == k) & (i >= 0) & (i < n)
        lo, hi = np.where(hit, i, 0), np.where(hit, i + 1, 0)
    else:
        lo, hi = _below(c, s, k + 1 if op in ("le", "gt") else k, n)
        if op in ("gt", "ge"):     # the lanes not below: the rest of the axis
            lo, hi = (hi, np.full_like(hi, n)) if s > 0 else (np.zeros_like(lo), lo)
    out = tensor(None, D.int1, shape)
    out.box = _boxed(lo, hi, d, shape)
    return out


def _all_true(x: tensor) -> bool:
    """A mask decided True for every lane of every program (a broadcast of one True)."""
    v = x._v
    return v is not None and x.lazy is None and v.dtype == bool and not any(v.strides) and v.size > 0 and \
        bool(v.reshape(-1)[0])


def _placed(x: tensor, sources, shape):
    """x's bounds on the axes of `shape`: axis k is x's axis sources[k], or (None) an axis x does
    not hold, kept whole by the programs that keep anything."""
    lo, hi = x.box
    kept = (hi > lo).all(axis=1)
    lo_all = np.zeros((lo.shape[0], len(shape)), np.int64)
    hi_all = np.zeros((lo.shape[0], len(shape)), np.int64)
    for k, d in enumerate(sources):
        if d is None:
            hi_all[:, k] = np.where(kept, shape[k], 0)
        else:
            lo_all[:, k], hi_all[:, k] = lo[:, d], hi[:, d]
    return lo_all, hi_all


def widened(x: tensor, shape):
    """x's box bounds on every axis of `shape` (x's shape broadcast to it)."""
    if tuple(x.shape) == tuple(shape):
        return x.box
    pad = len(shape) - len(x.shape)
    return _placed(x, [d - pad if d >= pad and x.shape[d - pad] == n else None for d, n in enumerate(shape)], shape)


def box_and(a, b):
    """`a & b` of two box masks (or a box mask and a mask decided True everywhere): the
    intersection of their boxes, program by program; else None."""
    if type(a) is not tensor or type(b) is not tensor or a.dtype is not D.int1 or b.dtype is not D.int1:
        return None
    if a.box is None and b.box is None:
        return None
    try:
        shape = broadcast_shape(a.shape, b.shape)
    except ValueError:
        return None
    if a.box is None or b.box is None:
        box, other = (b, a) if a.box is None else (a, b)
        if not _all_true(other):
            return None
        out = tensor(None, D.int1, shape)
        out.box = widened(box, shape)
        return out
    (la, ha), (lb, hb) = widened(a, shape), widened(b, shape)
    if la.shape[0] != lb.shape[0] and 1 not in (la.shape[0], lb.shape[0]):
        return None
    out = tensor(None, D.int1, shape)
    out.box = _emptied(np.maximum(la, lb), np.minimum(ha, hb))
    return out


def reindexed(x: tensor, sources, shape):
    """x indexed with None and ':' (`mask[:, None]`): output axis k is x's axis sources[k], or a
    new axis of one lane (None)."""
    out = tensor(None, D.int1, shape)
    out.box = _placed(x, sources, shape)
    return out
