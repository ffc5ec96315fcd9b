"""Pointers into kernel arguments, loads and stores.

A pointer is an int64 offset tensor (in elements, relative to its argument's element 0) that
carries the argument's `Buffer` (see storage.py).  Loads read the launch's current view of
memory, stores are logged or written to a private copy, and lanes of programs that are not
active (a divergent branch or loop they do not take) neither read nor write.
"""
from __future__ import annotations

import math

import numpy as np

from .dtypes import constexpr_value
from . import dtypes as D
from . import addresses, block_ptr, boxes, context, counting, gathers
from .storage import Buffer, OutOfBoundsError, Region, Window, window, program_view  # noqa: F401 (OutOfBoundsError: users import it here)
from .tensor import FROM_ABOVE, POISON, broadcast_shape, check_lockstep_bytes, tensor, to_tensor, broadcast_rows
from .affine import affine_bounds
from .fast_loops import bounds
from .arithmetic import binary
from .hints import LOAD_CACHE_MODIFIERS, STORE_CACHE_MODIFIERS, check_hints
from .casts import cast, Rounding
from .expressions import Expression
from .elementwise import where


def argument_pointer(buf: Buffer, const: bool = False) -> tensor:
    """The pointer a kernel receives for an array argument (`const` for one annotated tl.const)."""
    return tensor(None, D.pointer_type(buf.dtype, const=const), (), aff=(np.zeros(1, np.int64), ()), buf=buf)


def check_not_const(pointer: tensor):
    if pointer.dtype.is_const():
        raise ValueError("Cannot store to a constant pointer")


# ---------------------------------------------------------------- pointer arithmetic
def _offsets(p: tensor) -> tensor:
    t = tensor(p._v, D.int64, p.shape, aff=p.aff)
    t.runs = p.runs
    return t


def pointer_binary(a, b, op):
    if isinstance(a, tensor) and a.buf is not None and isinstance(b, tensor) and b.buf is not None:
        if op == "sub" and a.buf is b.buf:
            return binary(_offsets(a), _offsets(b), "sub")
        if op in ("eq", "ne", "lt", "le", "gt", "ge") and a.buf is b.buf:
            return binary(_offsets(a), _offsets(b), op)
        raise TypeError(f"unsupported pointer operation '{op}' between two pointers")
    ptr, other, ptr_first = (a, b, True) if isinstance(a, tensor) and a.buf is not None else (b, a, False)
    other = to_tensor(other)
    if not other.dtype.is_int():    # a boolean offset is 0 or 1, as in Triton (only floats are refused)
        raise TypeError(f"pointer arithmetic needs integer offsets, got {other.dtype}")
    if op not in ("add", "sub") or (op == "sub" and not ptr_first):
        raise TypeError(f"unsupported pointer operation '{op}'")
    r = binary(_offsets(ptr), other, op)
    out = tensor(r._v, ptr.dtype, r.shape, aff=r.aff, buf=ptr.buf)
    out.runs = r.runs
    return out


def pointer_where(cond, x, y, every_program=False):
    if x.buf is None or y.buf is None:
        raise TypeError("tl.where cannot choose between a pointer and a number")
    if y.buf is not x.buf:  # pointers into different arrays: choose between addresses
        if x.dtype != y.dtype:
            raise TypeError(f"tl.where between pointers of different types {x.dtype} and {y.dtype}")
        space = addresses.space()
        x, y = space.encoded(x), space.encoded(y)
    r = where(cond, _offsets(x), _offsets(y), every_program=every_program)
    out = tensor(r._v, x.dtype, r.shape, aff=r.aff, buf=x.buf)
    out.runs = r.runs
    return out


# ---------------------------------------------------------------- access helpers
def check_pointer(pointer, what):
    if not isinstance(pointer, tensor) or pointer.buf is None:
        raise TypeError(f"tl.{what} expects a pointer (an array argument plus offsets), got {pointer!r}")
    return pointer


def _boxes_pay(pointer, m) -> bool:
    """Whether a masked access touches enough lanes over all its programs (boxes.ACCESS_LANES)
    for reading its mask's boxes as windows to cost less than going lane by lane."""
    rows = max(pointer.rows, m.rows if type(m) is tensor else m.shape[0])
    return rows * int(np.prod(pointer.shape)) >= boxes.ACCESS_LANES


def access_mask(mask, shape, what, boxes_ok=False):
    """The lanes an access touches: the user's mask and the launch's active programs, as a bool
    array (rows|1, ...) broadcastable to the pointer's block, or None for every lane.  With
    `boxes_ok`, a box mask (boxes.py) whose programs keep part of their block comes back as a box
    mask on the pointer's axes, its lanes not built: the caller reads its bounds, or asks mask_lanes."""
    active = context.current().active
    if mask is None and active is None:
        return None
    nd = len(shape)
    v = None
    if mask is not None:
        m = to_tensor(mask)
        if m.buf is not None:
            raise TypeError(f"tl.{what}: mask must be a boolean block, got a pointer")
        try:
            full = broadcast_shape(m.shape, tuple(shape))
        except ValueError:
            full = None
        if full != tuple(shape):
            raise ValueError(f"tl.{what}: mask of shape {list(m.shape)} does not broadcast to the pointer's shape "
                             f"{list(shape)}")
        if m.every and active is None:     # a mask used again, as a loop's or a round's accesses do
            return None
        if m.box is not None and m._v is None and active is None:
            lo, hi = boxes.widened(m, tuple(shape))
            whole = (lo == 0).all(axis=1) & (hi == np.array(shape, np.int64)).all(axis=1)
            if whole.all():
                return None
            if (whole | (hi == 0).all(axis=1)).all():
                return whole.reshape((-1,) + (1,) * nd)    # each program all its lanes or none
            if boxes_ok:                                   # the bounds on the pointer's axes
                out = tensor(None, D.int1, tuple(shape))
                out.box = (lo, hi)
                return out
        v = m.v
        v = v.reshape((v.shape[0],) + (1,) * (nd - len(m.shape)) + m.shape).astype(bool, copy=False)
        if nd and not any(v.strides[1:]):  # the same for every lane of a program: keep one per program
            v = v[(slice(None),) + (slice(0, 1),) * nd]
    if active is not None:
        a = active.reshape((-1,) + (1,) * nd)
        v = a if v is None else v & a
    if not v.all():
        return v
    if active is None and mask is not None:
        m.every = True
    return None


def mask_lanes(m: tensor, shape):
    """The lanes of a box mask that access_mask handed back whole, as access_mask gives them."""
    v = m.v
    return v.reshape((v.shape[0],) + (1,) * (len(shape) - len(m.shape)) + m.shape).astype(bool, copy=False)


_MIN, _MAX = np.minimum.reduce, np.maximum.reduce   # without ndarray.min's Python wrapper (hot: every access)


def _affine_in_bounds(pointer):
    """Storage offsets of an affine pointer whose every lane lies inside its argument, else None."""
    if pointer.aff is None:
        return None
    c, steps = pointer.aff
    span, kept = 0, []
    for s, k in zip(steps, pointer.shape):
        if k > 1 and s < 0:
            return None
        kept.append(s if k > 1 else 0)
        span += s * (k - 1) if k > 1 else 0
    buf = pointer.buf
    base = c + buf.origin
    lo, hi = (int(base[0]),) * 2 if base.shape[0] == 1 else bounds(base)
    if lo < buf.lo or hi + span >= buf.hi:
        return None
    return base, tuple(kept)


def program_addresses(pointer):
    """Storage offsets, one per program of the launch group, of a pointer holding one address
    per program (a lock, a counter), when every program runs, nothing is traced and every
    address lies inside its argument; else None, and the general path checks and explains.
    A locked region's atomics take it once a round, where the general path's masks and
    broadcasts cost more than the atomic itself."""
    st = context.current()
    buf = pointer.buf
    if pointer.shape or pointer.aff is None or st.active is not None or st.counts is not None or \
            isinstance(buf, addresses.MixedBuffer):
        return None
    off = pointer.aff[0] + buf.origin
    if off.shape[0] != st.rows:
        if off.shape[0] != 1:
            return None
        off = np.full(st.rows, off[0], np.int64)
    lo, hi = bounds(off)
    return off if buf.lo <= lo and hi < buf.hi else None


def _whole_region(pointer, value, st):
    """The Region a store of deferred arithmetic fills, when the programs' blocks are dense and
    evenly spaced, without overlap, in an argument nothing has read in this launch (vector add's
    `z`, a normalisation's output rows), else None.  Its expression is then computed at commit into
    that stretch (storage.Region): the block is never written to a temporary and copied, which
    was a third of vector add's time."""
    if not (st.logging and type(value) is tensor and value._v is None and type(value.lazy) is Expression and
            value.dtype is pointer.buf.dtype and st.flat.dtype == value.lazy.dtype and
            tuple(value.shape) == tuple(pointer.shape)):
        return None
    fast = _affine_in_bounds(pointer)
    if fast is None:
        return None
    base, steps = fast
    shape = tuple(pointer.shape)
    size = int(np.prod(shape))
    dense = tuple(int(np.prod(shape[d + 1:])) for d in range(len(shape)))
    rows = value.lazy.rows
    if tuple(s for s, k in zip(steps, shape) if k > 1) != tuple(s for s, k in zip(dense, shape) if k > 1) or \
            value.lazy.full != (rows,) + shape or base.shape[0] != rows:
        return None
    gap = int(base[1] - base[0]) if rows > 1 else size
    if gap < size or rows > 1 and not (np.diff(base) == gap).all():
        return None                 # blocks that overlap or are not evenly spaced
    return Region(int(base[0]), gap, value.lazy.full)


def _raise_oob(pointer, off, bad, what):
    ctx = context.current()
    buf = pointer.buf
    rows = bad.reshape(bad.shape[0], -1)
    row = int(np.argmax(rows.any(1)))
    lane = int(np.argmax(rows[row]))
    o = int(off.reshape(off.shape[0], -1)[min(row, off.shape[0] - 1), lane]) - buf.origin
    raise OutOfBoundsError(
        f"kernel '{ctx.name}', program {ctx.pid_tuple(row)}: tl.{what} through argument '{buf.name}' "
        f"is out of bounds: offset {o} (lane {lane} of a block of shape {list(pointer.shape)}) is outside "
        f"[{buf.lo - buf.origin}, {buf.hi - buf.origin}); mask the access or fix the offsets. The launch wrote nothing.")


def materialized(pointer, m, what, rows=None):
    """Storage offsets, broadcast to (rows, *shape), with masked-off lanes set to 0 after
    checking the rest, and the mask broadcast alike (or None)."""
    buf = pointer.buf
    off = pointer.v + buf.origin
    rows = max(off.shape[0], 1 if m is None else m.shape[0], rows or 1)
    off = broadcast_rows(off, (rows,) + off.shape[1:])
    if m is not None:
        m = broadcast_rows(m, off.shape)
    if m is not None or not off.size or _MIN(off, None) < buf.lo or _MAX(off, None) >= buf.hi:
        bad = (off < buf.lo) | (off >= buf.hi)
        if m is not None:
            bad &= m
        if bad.any():
            _raise_oob(pointer, off, bad, what)
    if m is not None:
        off = np.where(m, off, buf.origin if buf.lo <= buf.origin < buf.hi else buf.lo)
    return off, m


# ---------------------------------------------------------------- load / store
def count_access(pointer, m, field):
    """While tracing: bytes (or lanes) this access moves for each program, and for a program's
    first read of an argument, where its block starts (programs sharing a tile share it)."""
    cnt = context.current().counts
    if cnt is None:
        return
    n = counting.lanes(m, pointer.shape, cnt.tc_flops.shape[0])
    cnt.max_block = max(cnt.max_block, pointer.numel)
    if field == "atomics":
        cnt.atomics += n
        return
    nbytes = n * pointer.buf.dtype.np.itemsize
    getattr(cnt, field).__iadd__(nbytes)
    if field == "loaded":
        name = pointer.buf.name
        cnt.arg_loaded[name] = cnt.arg_loaded.get(name, 0.0) + nbytes
        if name not in cnt.origins:
            if pointer.aff is not None:  # the block's corner identifies the tile, masked or not
                first = affine_bounds(pointer)[0]
            else:
                off = pointer.v.reshape(pointer.rows, -1).astype(np.float64)
                if m is not None:
                    mm = np.broadcast_to(m, (max(m.shape[0], off.shape[0]),) + tuple(pointer.shape))
                    off = np.where(mm.reshape(mm.shape[0], -1), np.broadcast_to(off, mm.reshape(mm.shape[0], -1).shape),
                                   np.inf)
                first = off.min(axis=1)
            cnt.origins[name] = np.broadcast_to(np.asarray(first, np.float64), n.shape).copy()


def load(pointer, mask=None, other=None, boundary_check=(), padding_option="", cache_modifier="",
         eviction_policy="", volatile=False):
    if cache_modifier or eviction_policy:
        check_hints(cache_modifier, eviction_policy, LOAD_CACHE_MODIFIERS)
    if isinstance(pointer, block_ptr.block_pointer):
        if mask is not None or other is not None:
            raise ValueError("tl.load: mask and other cannot be used with a block pointer; use boundary_check "
                             "and padding_option")
        other = block_ptr.padding(pointer, padding_option)
        pointer, mask = block_ptr.pointers_and_mask(pointer, boundary_check, "load")
    elif other is not None and mask is None:
        raise ValueError("`other` cannot be provided without `mask`")
    elif constexpr_value(boundary_check):
        raise ValueError("tl.load: boundary_check needs a block pointer (tl.make_block_ptr); use mask= otherwise")
    pointer = check_pointer(pointer, "load")
    buf = pointer.buf
    plain = not isinstance(buf, addresses.MixedBuffer) and context.current().counts is None
    m = access_mask(mask, pointer.shape, "load", boxes_ok=plain and pointer.runs is None)
    box_mask = type(m) is tensor
    if box_mask:                # a box mask: its windows read without building its lanes
        boxed = _box_load(pointer, m, other, buf.storage.data(), buf) if _boxes_pay(pointer, m) else None
        if boxed is not None:
            return boxed
        m = mask_lanes(m, pointer.shape)     # (its lanes' boxes would not pay or fail alike below)
    if isinstance(buf, addresses.MixedBuffer) and context.current().counts is None:
        return addresses.load(pointer, m, other, user_mask=mask is not None)
    if context.current().counts is not None:
        count_access(pointer, m, "loaded")
        if buf.dtype.kind == "f":  # tracing reads no float data (integers may be indices: those it reads)
            zeros = np.zeros((1,) * (len(pointer.shape) + 1), buf.dtype.container)
            rows = max(pointer.rows, 1 if m is None else m.shape[0])
            return tensor(np.broadcast_to(zeros, (rows,) + tuple(pointer.shape)), buf.dtype, pointer.shape)
    fill_rows = None
    if m is not None:
        pointer, m, fill_rows = _borrow_active_blocks(pointer, m)
    st = buf.storage
    src = st.data()  # after the tracing exit: a traced launch never converts a half-precision argument
    fast = _affine_in_bounds(pointer) if m is None else None
    if fast is not None:
        base, steps = fast
        if pointer.shape and not st.dirty:
            # the block stays tied to its place in memory: a view shared between programs, and
            # a window description that lets a chain of dots read all its K steps at once
            st.exported = True
            view = program_view(src, base, steps, pointer.shape)
            t = tensor.from_view(view, buf.dtype, pointer.shape) if view is not None else \
                tensor(None, buf.dtype, pointer.shape)  # copied from the window only if used alone
            t.win = (src, base, steps)
            if fill_rows is None:
                return t
            vals = t.v
        else:
            check_lockstep_bytes(base.shape[0], base.shape[0] * math.prod(pointer.shape) * src.itemsize)
            vals = window(src, steps, pointer.shape)[base] if pointer.shape else src[base]
        if fill_rows is not None:
            m = ~fill_rows.reshape((-1,) + (1,) * len(pointer.shape))
    else:
        if pointer.runs is not None:
            fill = _fill(other, buf, src, pointer) if m is not None else None
            loaded = gathers.read_runs(pointer, m, fill, src, buf)
            if loaded is not None:
                return loaded
        boxed = _box_load(pointer, m, other, src, buf) if m is not None and not box_mask and \
            _boxes_pay(pointer, m) else None
        if boxed is not None:
            return boxed
        off, m = materialized(pointer, m, "load")
        check_lockstep_bytes(off.shape[0] if off.ndim else 1, off.size * src.itemsize)
        vals = src[off] if src.size else np.zeros(off.shape, src.dtype)  # an empty argument: all masked
    if m is not None:
        vals = np.where(m, vals, _fill(other, buf, src, pointer))
    return tensor(vals, buf.dtype, pointer.shape)


def _fill(other, buf, src, pointer):
    """A masked load's `other`, in the argument's container type, shaped to broadcast."""
    fill = np.zeros((), src.dtype) if other is None else to_tensor(other, _like(buf)).v
    fill = fill.astype(src.dtype, copy=False) if hasattr(fill, "astype") else fill
    if isinstance(fill, np.ndarray) and fill.ndim >= 1:   # one per program (rows first), aligned to the block
        fill = fill.reshape((fill.shape[0],) + (1,) * (len(pointer.shape) + 1 - fill.ndim) + fill.shape[1:])
    return fill


def _box_load(pointer, m, other, src, buf):
    """A load whose mask keeps a box of each block (gathers.masked_boxes): `other` everywhere, then
    each box's window."""
    boxes = gathers.masked_boxes(pointer, m)
    if boxes is None:
        return None
    fill = _fill(other, buf, src, pointer)
    rows = max(pointer.aff[0].shape[0], m.rows if type(m) is tensor else m.shape[0],
               fill.shape[0] if isinstance(fill, np.ndarray) and fill.ndim else 1)
    windows = []
    for idx, sub, cuts in boxes:
        fast = _affine_in_bounds(sub)
        if fast is None:
            return None                             # a kept lane out of bounds: the general path says which
        windows.append((idx, fast, sub.shape, cuts))
    one = np.size(fill) == 1                        # `other` one value (a number, or None)
    if one:
        fill = np.asarray(fill).reshape(())
        shared = gathers.shared_boxes(windows, rows, pointer, src, fill) if rows > 2 else None
        if shared is not None:
            return shared
    out = np.empty((rows,) + tuple(pointer.shape), src.dtype)
    whole = [idx for idx, _, shape, _ in windows if shape == tuple(pointer.shape)]     # boxes that are the block
    if one and len(windows) == 1 and windows[0][0] is None:
        gathers.fill_outside(out, windows[0][3], fill)   # every program the same box: `other` around it only
    elif whole and one and all(idx is not None for idx in whole):
        partial = np.ones(rows, bool)               # `other` only for the programs with a masked lane
        partial[np.concatenate(whole)] = False
        out[partial] = fill
    else:
        np.copyto(out, fill)
    for idx, (base, steps), shape, cuts in windows:
        view = program_view(src, base, steps, shape) if idx is None else None
        if view is not None and view.ndim == len(shape) + 1:
            out[(slice(None),) + cuts] = view       # the programs' boxes are one strided view: no gather
        else:
            out[(slice(None) if idx is None else idx,) + cuts] = window(src, steps, shape)[base]
    return tensor(out, buf.dtype, pointer.shape)


def _box_store(pointer, m, vals, st) -> bool:
    """A store whose mask keeps a box of each block (gathers.masked_boxes), as a window per box; False
    when it does not, a kept lane is out of bounds (the general path then says which), or boxes
    of different programs may overlap: written box by box, the later program would not always
    write last, as it does when programs run in order."""
    boxes = gathers.masked_boxes(pointer, m)
    if boxes is None or len(boxes) > 1 and _may_overlap(boxes):
        return False
    puts = []
    for idx, sub, cuts in boxes:
        fast = _affine_in_bounds(sub)
        if fast is None:
            return False
        base, steps = fast
        lanes = tuple(cut if n > 1 else slice(None) for cut, n in zip(cuts, vals.shape[1:]))
        part = vals[(slice(None) if idx is None or vals.shape[0] == 1 else idx,) + lanes]
        part = broadcast_rows(part, (max(base.shape[0], part.shape[0]),) + sub.shape)
        if base.shape[0] < part.shape[0]:
            base = broadcast_rows(base, part.shape[:1])
        puts.append((Window(base, steps, sub.shape), part))
    for target, part in puts:
        st.put(target, part)
    return True


def _may_overlap(boxes) -> bool:
    """Whether boxes of different programs may share an element.  Boxes of rows with one step
    between their elements, `stride` between their rows (a tile of a row-major array, stored
    as it is or transposed), are rectangles of an array `stride` wide, compared exactly (edge
    tiles sit beside each other); others by the spans they cover, first to last element."""
    bases = [np.broadcast_to(sub.aff[0], (1 if idx is None else idx.size,)) for idx, sub, _ in boxes]
    steps = {sub.aff[1] for _, sub, _ in boxes}
    step = next(iter(steps))
    if len(steps) == 1 and len(step) == 2 and 1 in step:
        unit = step.index(1)
        stride = step[1 - unit]
        rects = []
        for base, (_, sub, _) in zip(bases, boxes):
            row, col = np.divmod(base, stride) if stride > 0 else (base * 0, base)
            if stride <= 0 or np.any(col + sub.shape[unit] > stride):
                break                               # a row of the box wraps: not a rectangle
            rects.append(np.stack([row, row + sub.shape[1 - unit], col, col + sub.shape[unit]], axis=1))
        else:
            return gathers.rectangles_meet(np.concatenate(rects))
    lo = np.concatenate(bases)
    hi = np.concatenate([b + sum(s * (n - 1) for s, n in zip(sub.aff[1], sub.shape))
                         for b, (_, sub, _) in zip(bases, boxes)])
    order = np.argsort(lo, kind="stable")
    return bool(np.any(lo[order][1:] <= np.maximum.accumulate(hi[order])[:-1]))


def _borrow_active_blocks(pointer, m):
    """A load masked per program only (programs not running, or a mask the same for every lane of
    a program): programs switched off read an active program's block instead, so the load stays a
    strided view, then take `other` where their own mask was off.  Returns (pointer, mask, rows to
    fill with `other` or None); the mask is None when the borrowing worked."""
    if pointer.aff is None or any(n != 1 for n in m.shape[1:]):
        return pointer, m, None
    c, steps = pointer.aff
    on = m.reshape(-1)
    if not on.any() or c.shape[0] not in (1, on.shape[0]):
        return pointer, m, None
    if c.shape[0] > 1:
        c = np.where(on, c, c[int(np.argmax(on))])
    borrowed = tensor(None, pointer.dtype, pointer.shape, aff=(c, steps), buf=pointer.buf)
    if _affine_in_bounds(borrowed) is None:
        return pointer, m, None
    active = context.current().active
    off = ~on if active is None else ~on & np.broadcast_to(active, on.shape)  # off by the user's mask
    if off.any():
        off = np.broadcast_to(off, (max(off.shape[0], c.shape[0]),))
        return borrowed, None, off
    return borrowed, None, None


def _like(buf):
    return tensor(None, buf.dtype, ())


def values_for(pointer, value, what, unrounded_ok=False):
    """The values to store, broadcast to the pointer's rank.  With `unrounded_ok`, fp32 values
    bound for a half-precision argument come back unrounded (the caller rounds them later)."""
    buf = pointer.buf
    if type(value) is tensor and value.dtype is buf.dtype and value.buf is None and value.shape == pointer.shape \
            and not (unrounded_ok and value._v is None and isinstance(value.lazy, Rounding)):
        v = value.v             # the usual store: a block of the argument's type and the pointer's shape
        if v.ndim == len(value.shape) + 1:
            return v
    if type(value) is int and buf.dtype.kind == "i":  # a flag, a count: no tensor needed
        lo, hi = D.int_range(buf.dtype)
        if lo <= value <= hi:
            return np.full((1,) * (len(pointer.shape) + 1), value, buf.dtype.container)
    value = to_tensor(value, _like(buf))
    if value.buf is not None:       # a pointer stored as its address, as Triton's ptrtoint cast does
        if not buf.dtype.is_int() or buf.dtype.bits != 64:
            raise TypeError(f"tl.{what}: a pointer can only be stored into 64-bit integers, not {buf.dtype}")
        value = addresses.cast_from_pointer(value, buf.dtype)
    if value.dtype is not buf.dtype:
        value = cast(value, buf.dtype)
    if unrounded_ok and value._v is None and isinstance(value.lazy, Rounding):
        value = value.lazy.src
    try:
        full = broadcast_shape(value.shape, tuple(pointer.shape))
    except ValueError:
        full = None
    if full != tuple(pointer.shape):
        raise ValueError(f"tl.{what}: value of shape {list(value.shape)} does not broadcast to the pointer's shape "
                         f"{list(pointer.shape)}")
    v = value.v
    return v.reshape((v.shape[0],) + (1,) * (len(pointer.shape) - len(value.shape)) + value.shape)


def store(pointer, value, mask=None, boundary_check=(), cache_modifier="", eviction_policy=""):
    if cache_modifier or eviction_policy:
        check_hints(cache_modifier, eviction_policy, STORE_CACHE_MODIFIERS)
    if isinstance(pointer, block_ptr.block_pointer):
        if mask is not None:
            raise ValueError("tl.store: mask cannot be used with a block pointer; use boundary_check")
        pointer, mask = block_ptr.pointers_and_mask(pointer, boundary_check, "store")
    elif constexpr_value(boundary_check):
        raise ValueError("tl.store: boundary_check needs a block pointer (tl.make_block_ptr); use mask= otherwise")
    pointer = check_pointer(pointer, "store")
    check_not_const(pointer)
    if value is POISON:        # an undefined value: leaving memory as it is is one of its outcomes
        return None
    buf = pointer.buf
    if isinstance(buf, addresses.MixedBuffer):
        # fp32 values bound for half precision come unrounded: addresses.store rounds them for a
        # target that is not just logging its stores (the others round as they convert at commit)
        vals = values_for(pointer, value, "store", unrounded_ok=True)
        m = access_mask(mask, pointer.shape, "store")
        if context.current().counts is not None:
            count_access(pointer, m, "stored")
            return None
        context.current().writes += 1
        return addresses.store(pointer, vals, m)
    buf.check_writable()
    st = buf.storage
    state = context.current()
    m = access_mask(mask, pointer.shape, "store", boxes_ok=state.counts is None)
    box_mask, vals = type(m) is tensor, None
    if box_mask:                # a box mask: its windows written without building its lanes
        vals = values_for(pointer, value, "store", unrounded_ok=st.logging)
        if _boxes_pay(pointer, m) and _box_store(pointer, m, vals, st):
            state.writes += 1
            return None
        m = mask_lanes(m, pointer.shape)     # (its lanes' boxes would not pay or fail alike below)
    region = _whole_region(pointer, value, st) if m is None and state.counts is None else None
    if region is not None:          # deferred arithmetic computed at commit straight into the output
        state.writes += 1
        st.put(region, value.lazy)
        return None
    if vals is None:
        vals = values_for(pointer, value, "store", unrounded_ok=st.logging)
    if state.counts is not None:  # tracing stores nothing (and checks no bounds)
        count_access(pointer, m, "stored")
        return None
    state.writes += 1
    fast = _affine_in_bounds(pointer) if m is None else None
    if fast is not None:
        base, steps = fast
        vals = broadcast_rows(vals, (max(base.shape[0], vals.shape[0]),) + pointer.shape)
        if base.shape[0] < vals.shape[0]:
            base = broadcast_rows(base, vals.shape[:1])
        st.put(Window(base, steps, pointer.shape), vals)
        return None
    if m is not None and pointer.aff is not None and not any(n != 1 for n in m.shape[1:]):
        # masked per program only: the blocks of the programs that store, written whole
        rows = max(pointer.aff[0].shape[0], m.shape[0], vals.shape[0])
        sel = np.flatnonzero(np.broadcast_to(m.reshape(-1), (rows,)))
        if not sel.size:
            return None
        c, steps = pointer.aff
        fast = _affine_in_bounds(tensor(None, pointer.dtype, pointer.shape, aff=(np.broadcast_to(c, (rows,))[sel], steps),
                                        buf=buf))
        if fast is not None:
            base, steps = fast
            st.put(Window(base, steps, pointer.shape), np.broadcast_to(vals, (rows,) + pointer.shape)[sel])
            return None
    if m is not None and not box_mask and _boxes_pay(pointer, m) and _box_store(pointer, m, vals, st):
        return None
    off, m = materialized(pointer, m, "store", vals.shape[0])
    vals = np.broadcast_to(vals, off.shape)
    if m is None:
        st.put(off.reshape(-1), vals.reshape(-1))
    else:
        st.put(off[m], vals[m])
    return None


FROM_ABOVE.update(pointer_binary=pointer_binary, pointer_where=pointer_where)   # for arithmetic.binary and elementwise.where
