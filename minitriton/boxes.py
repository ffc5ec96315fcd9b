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


def _boxed(lo, hi, d, shape):
    """Bounds on every axis from those on axis d (the others whole), a program that keeps no lane
    of axis d keeping none of any axis."""
    rows = lo.shape[0]
    lo_all = np.zeros((rows, len(shape)), np.int64)
    hi_all = np.empty((rows, len(shape)), np.int64)
    hi_all[:] = shape
    empty = hi <= lo
    lo_all[:, d], hi_all[:, d] = lo, hi
    if empty.any():
        lo_all[empty] = hi_all[empty] = 0
    return lo_all, hi_all


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


def widened(x: tensor, shape):
    """x's box bounds on every axis of `shape` (x's shape broadcast to it): an axis x holds once
    is kept whole by the programs that keep anything."""
    lo, hi = x.box
    pad = len(shape) - len(x.shape)
    kept = hi[:, 0] > lo[:, 0] if lo.shape[1] else np.ones(lo.shape[0], bool)
    lo_all = np.zeros((lo.shape[0], len(shape)), np.int64)
    hi_all = np.zeros((lo.shape[0], len(shape)), np.int64)
    for d, n in enumerate(shape):
        if d >= pad and x.shape[d - pad] == n:
            lo_all[:, d], hi_all[:, d] = lo[:, d - pad], hi[:, d - pad]
        else:
            hi_all[:, d] = np.where(kept, n, 0)
    return lo_all, hi_all


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
    lo, hi = np.maximum(la, lb), np.minimum(ha, hb)
    empty = (hi <= lo).any(axis=1)
    if empty.any():
        lo, hi = lo.copy(), hi.copy()
        lo[empty] = hi[empty] = 0
    out = tensor(None, D.int1, shape)
    out.box = (lo, hi)
    return out


def reindexed(x: tensor, sources, shape):
    """x indexed with None and ':' (`mask[:, None]`): output axis k is x's axis sources[k], or a
    new axis of one lane (None), kept by the programs that keep anything."""
    lo, hi = x.box
    some = (hi > lo).all(axis=1) if lo.shape[1] else np.ones(lo.shape[0], bool)
    new_lo = np.zeros((lo.shape[0], len(shape)), np.int64)
    new_hi = np.zeros((lo.shape[0], len(shape)), np.int64)
    for k, d in enumerate(sources):
        if d is None:
            new_hi[:, k] = some
        else:
            new_lo[:, k], new_hi[:, k] = lo[:, d], hi[:, d]
    out = tensor(None, D.int1, shape)
    out.box = (new_lo, new_hi)
    return out
