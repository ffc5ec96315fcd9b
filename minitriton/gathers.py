"""Reading blocks that are not one strided window per program, and sharing what programs read alike.

A load whose offsets are affine is a strided window per program (memory.py).  Two other shapes
of access are common and are read here without a gather per lane:
- runs: offsets that step evenly along one axis but are not affine (an embedding's
  `idx[:, None] * D + cols[None, :]`, tutorial 03's rows wrapped by `% M`; affine.runs_of keeps
  them as run starts and a step): read one strided run per start;
- boxes: a mask that keeps a box of each program's block (masked_boxes, below): read one window
  per box.
Programs that read the same runs, or the same box at the same place (a matmul's programs in one
row of tiles), read them once: the block is `shared` (tensor.py), program p's value being
`blocks[which[p]]`, and a dot multiplies shared blocks as one GEMM over the distinct ones.
"""
from __future__ import annotations

import numpy as np

from . import fast_loops
from .boxes import widened
from .storage import as_strided, window
from .tensor import run_values, tensor


def read_runs(pointer, m, fill, src, buf):
    """The block at a pointer holding runs, masked by m (None: every lane) with `fill` (one
    value, or one per program) where the mask is off; None when a lane leaves the argument,
    masked or not (the general path then reads only the lanes the mask keeps, or says where
    one is out).  Masked lanes are read too when they lie inside the argument; a K tail past
    its end is read clamped, its lanes there all masked off."""
    starts, axis, step = pointer.runs
    n = pointer.shape[axis]
    starts = starts.reshape(starts.shape[:axis + 1] + starts.shape[axis + 2:]) + buf.origin
    inside = int(starts.min()) >= buf.lo and int(starts.max()) + (n - 1) * step < buf.hi
    if not inside and m is None:
        return None
    which = None
    rows = starts.shape[0]
    if rows > 2 and (m is None or m.shape[0] == 1 and np.size(fill) == 1):
        distinct, which = distinct_rows(starts.reshape(rows, -1))
        if 2 * distinct.shape[0] <= rows:
            starts = distinct.reshape((-1,) + starts.shape[1:])
        else:
            which = None
    shape = (starts.shape[0],) + tuple(pointer.shape)
    if inside and step == 1:    # each run contiguous: one window per run
        vals = np.ascontiguousarray(np.broadcast_to(np.moveaxis(window(src, (1,), (n,))[starts], -1, axis + 1), shape))
    elif inside:                # runs down columns: the columns taken from each of the n rows they cross
        lo = int(starts.min())
        rows_view = as_strided(src[lo:], (n, int(starts.max()) - lo + 1), (step * src.itemsize, src.itemsize),
                               writeable=False)
        vals = np.take(rows_view, (starts - lo).reshape(-1), axis=1).reshape((n,) + starts.shape)
        vals = np.ascontiguousarray(np.broadcast_to(np.moveaxis(vals, 0, axis + 1), shape))
    else:
        off = run_values(np.expand_dims(starts, axis + 1), axis, step, pointer.shape)
        if (((off < buf.lo) | (off >= buf.hi)) & m).any():
            return None
        vals = src[np.clip(off, buf.lo, buf.hi - 1)]
    if m is not None:
        vals = np.where(m, vals, fill)
    return _shared(vals, which, buf.dtype, pointer.shape)


def group_keys(keys: np.ndarray):
    """(the distinct keys in increasing order, the index of each one's first occurrence, which of
    them each key is): np.unique's answer with return_index and return_inverse.  Every masked
    load asks this of its programs' boxes and again of their places, and np.unique's sort costs
    15-20 us however few the programs; the usual answers are found with a compare or two: keys
    all different and increasing (each program its own block), all alike, or alike but for a few
    programs that share another key (the ragged last block of a launch)."""
    n = keys.shape[0]
    if n < 2 or (keys[1:] > keys[:-1]).all():
        return keys, np.arange(n), np.arange(n)
    same = keys == keys[0]
    odd = np.flatnonzero(~same)
    if not odd.size:
        return keys[:1], np.zeros(1, np.int64), np.zeros(n, np.int64)
    if odd.size <= 8 and (keys[odd] == keys[odd[0]]).all():
        low = bool(keys[odd[0]] < keys[0])         # the odd key first when it is the smaller
        first = np.array([odd[0], 0] if low else [0, odd[0]], np.int64)
        which = np.where(same, int(low), int(not low)).astype(np.int64)
        return keys[first], first, which
    distinct, first, which = np.unique(keys, return_index=True, return_inverse=True)
    return distinct, first, which.reshape(-1)


def distinct_rows(a: np.ndarray):
    """(the distinct rows of a, which of them each row is).  Rows are told apart by their first
    element when that suffices (it does for a matmul's tiles), which one sort of a column finds;
    otherwise by a sort of the whole rows."""
    _, pick, which = group_keys(a[:, 0])
    if (a == a[pick[which]]).all():
        return a[pick], which
    distinct, which = np.unique(a, axis=0, return_inverse=True)
    return distinct, which.reshape(-1)


def masked_boxes(pointer, m):
    """A mask that keeps a box of each program's block (on each axis one run of lanes: `cols <
    n_cols` of a row that does not fill its block, the ragged edge of a matmul's edge tiles), on
    an affine pointer: [(the programs, None for all, the pointer cut to their box, the box's
    slices of the block)], one entry per distinct box and none for programs that keep nothing;
    None when some program's mask is not a box.  The access is then a strided window per box,
    where lane-by-lane offsets and a gather cost ten times more (Triton's softmax at 1823 x 781
    in blocks of 1024).  `m` is the access's mask array, or a box mask (boxes.py) whose bounds
    are the boxes already, no lane of it built or scanned."""
    if pointer.aff is None or not pointer.shape:
        return None
    c, steps = pointer.aff
    if type(m) is tensor:                           # a box mask: its bounds are the boxes
        starts, stops = widened(m, tuple(pointer.shape))
        rows, nd, kept = starts.shape[0], starts.shape[1], (stops > starts).all(axis=1)
        if rows != 1 and c.shape[0] not in (1, rows):
            return None
    else:
        rows, nd = m.shape[0], m.ndim - 1        # the mask's rows: 1 when it is the same for every program
                                                 # (blocks of one or two axes: the others take the general path)
        if rows != 1 and c.shape[0] not in (1, rows):
            return None
        if nd > 2:
            return None
        box, starts, stops, kept = fast_loops.mask_boxes(m)       # one compiled pass over the mask
        if not box:
            return None                                 # some program's lanes are not one box
        full = np.array(m.shape[1:]) == 1               # axes the mask does not vary along: the whole block
        starts = np.where(full, 0, starts)
        stops = np.where(full, np.array(pointer.shape, np.int64), stops)
    some = np.flatnonzero(kept)
    if not some.size:
        return []
    bounds = np.concatenate([starts, stops], axis=1)[some]
    code = bounds[:, 0]                             # one integer per box (np.unique over rows sorts
    for k in range(1, bounds.shape[1]):             # structured records: ten times slower)
        code = code * (max(pointer.shape) + 1) + bounds[:, k]
    _, first, which = group_keys(code)
    out = []
    for g, key in enumerate(bounds[first].tolist()):
        idx = None if rows == 1 else some[which == g]
        cuts = tuple(slice(a, b) for a, b in zip(key[:nd], key[nd:]))
        offset = sum(s * cut.start for s, cut in zip(steps, cuts))
        base = (c if idx is None or c.shape[0] == 1 else c[idx]) + offset
        shape = tuple(cut.stop - cut.start for cut in cuts)
        out.append((idx, tensor(None, pointer.dtype, shape, aff=(base, steps), buf=pointer.buf), cuts))
    return out


def shared_boxes(windows, rows, pointer, src, fill):
    """A boxed load (`windows`: [(programs or None for all, (bases, steps), box shape, box
    slices)]) as blocks shared by the programs that read the same box at the same place, each
    block read once, `fill` (one value) around the boxes; None when most programs read blocks
    of their own."""
    n = len(windows) + 1
    key = np.zeros(rows, np.int64)                  # base * n + group + 1; 0: a program that keeps nothing
    for g, (idx, (base, _), _, _) in enumerate(windows):
        at = slice(None) if idx is None else idx
        key[at] = np.broadcast_to(base, key[at].shape) * n + g + 1
    distinct, _, which = group_keys(key)
    if 2 * distinct.size > rows:
        return None
    blocks = np.empty((distinct.size,) + tuple(pointer.shape), src.dtype)
    blocks[...] = fill
    group, base = distinct % n - 1, distinct // n
    for g, (_, (_, steps), shape, cuts) in enumerate(windows):
        mine = np.flatnonzero(group == g)
        blocks[(mine,) + cuts] = window(src, steps, shape)[base[mine]]
    return _shared(blocks, which.reshape(-1), pointer.buf.dtype, pointer.shape)


def _shared(blocks, which, dtype, shape):
    if which is None:
        return tensor(blocks, dtype, shape)
    out = tensor(None, dtype, shape)
    out.shared = (blocks, which)
    return out


def fill_outside(out, cuts, value):
    """value in every lane of out's blocks outside the box `cuts`, slab by slab."""
    for d, cut in enumerate(cuts):
        lead = (slice(None),) + cuts[:d]
        if cut.start > 0:
            out[lead + (slice(0, cut.start),)] = value
        if cut.stop < out.shape[d + 1]:
            out[lead + (slice(cut.stop, None),)] = value


def rectangles_meet(r: np.ndarray) -> bool:
    """Whether two of the rectangles [r0, r1) x [c0, c1) (the rows of r) share a cell: the boxes
    of a store by several programs, which written box by box must not overlap.  Each is painted
    onto the grid cut by every rectangle's edges (a difference array, summed twice): a cell
    painted twice is shared.  Edge tiles beside a grid of whole tiles cut few lines, so the grid
    is small; when it would not be, pairs are compared, or (past 1024 rectangles) the answer is
    "may" and the caller takes the general path."""
    rows, ri = np.unique(r[:, :2], return_inverse=True)
    cols, ci = np.unique(r[:, 2:], return_inverse=True)
    if rows.size * cols.size > 1 << 22:
        if r.shape[0] > 1024:
            return True
        meet = (r[:, None, 0] < r[None, :, 1]) & (r[None, :, 0] < r[:, None, 1]) & \
            (r[:, None, 2] < r[None, :, 3]) & (r[None, :, 2] < r[:, None, 3])
        np.fill_diagonal(meet, False)
        return bool(meet.any())
    ri, ci = ri.reshape(-1, 2), ci.reshape(-1, 2)
    paint = np.zeros((rows.size, cols.size), np.int64)
    for (a, b), sign in (((0, 0), 1), ((0, 1), -1), ((1, 0), -1), ((1, 1), 1)):
        np.add.at(paint, (ri[:, a], ci[:, b]), sign)
    return bool((paint.cumsum(0).cumsum(1) > 1).any())
