"""Kernel arguments' memory: pointers, loads, stores and atomics.

Each array argument becomes a `Buffer`: a flat view of the memory the array spans, with
element 0 at the array's first element (like a device pointer), so strided and transposed
views work with strides passed as ints.  Stores go to a private copy that is written back
only when the whole launch has succeeded; an error anywhere leaves every argument untouched.
"""
from __future__ import annotations

import sys

import numpy as np
from numpy.lib.stride_tricks import as_strided

from . import dtypes as D
from . import _numba
from . import context, counting
from .tensor import tensor, to_tensor, _round, POOL
from .ops import _bshape


class OutOfBoundsError(IndexError):
    """An unmasked load or store touched memory outside its argument."""


def _flat_view(name, a: np.ndarray):
    item = a.itemsize
    if a.ndim == 0:
        a = a.reshape(1)
    if any(s % item for s in a.strides):
        raise ValueError(f"argument '{name}': strides {a.strides} are not a multiple of the element size {item}")
    if a.size == 0:
        return a.reshape(-1), 0
    x = a[tuple(slice(None, None, -1) if s < 0 else slice(None) for s in a.strides)]
    extent = 1 + sum((n - 1) * abs(s) // item for n, s in zip(a.shape, a.strides))
    origin = sum((n - 1) * -s // item for n, s in zip(a.shape, a.strides) if s < 0)
    return as_strided(x, shape=(extent,), strides=(item,), writeable=a.flags.writeable), origin


class Buffer:
    def __init__(self, name: str, array: np.ndarray):
        self.name = name
        self.dtype = D.from_numpy(array.dtype)
        self.flat, self.origin = _flat_view(name, array)
        self.reset()

    def reset(self):
        """Drop the private copy (its memory goes back to the pool unless a view still uses it)."""
        shadow = getattr(self, "shadow", None)
        if shadow is not None and getattr(self, "private", False) and sys.getrefcount(shadow) <= 3:
            POOL.give(shadow)
        self.shadow, self.private, self.dirty, self.exported = None, False, False, False
        self.log = []  # stores to a buffer never read in this launch: applied straight at commit

    def check_writable(self):
        if not self.flat.flags.writeable:
            raise ValueError(f"argument '{self.name}' is read-only but the kernel stores to it")

    @property
    def logging(self):
        """Stores are still only logged (converted to the argument's dtype at commit)."""
        return self.shadow is None

    def put(self, target, vals):
        """Store `vals` at `target` (a _Window or flat offsets).  Until the buffer is read, stores
        are only logged: an output that is just written is never converted or copied whole."""
        self.dirty = True
        if self.shadow is None:
            self.log.append((target, vals))
        else:
            _assign(self.writable(), target, vals)

    def data(self) -> np.ndarray:
        """Flat values in the container dtype, for reading."""
        if self.log:
            log, self.log = self.log, []
            dst = self.writable()
            half = self.dtype.is_floating() and self.dtype.bits == 16
            for target, vals in log:  # logged values may be unrounded fp32 (see store)
                _assign(dst, target, _round(vals, self.dtype) if half else vals)
        if self.shadow is None:
            if self.flat.dtype == self.dtype.container:
                self.shadow = self.flat
            else:
                self.shadow = self._convert_in()
                self.private = True
        return self.shadow

    def _convert_in(self):
        if self.dtype is D.float16:
            return _numba.half_to_float(self.flat, POOL.empty(self.flat.shape, np.float32))
        return self.flat.astype(self.dtype.container)

    def _to_storage(self, vals):
        if self.dtype is D.float16:
            return _numba.float_to_half(np.ascontiguousarray(vals))
        return vals.astype(self.flat.dtype, copy=False)

    def writable(self) -> np.ndarray:
        """The private copy that stores go to.  Loaded blocks may be views of the current
        shadow (`exported`): then the first store copies it, so those blocks keep the values
        they had when loaded."""
        self.check_writable()
        data = self.data()
        if not self.private or self.exported:
            self.shadow = POOL.empty(data.shape, data.dtype)
            self.shadow[...] = data
            self.private, self.exported = True, False
        self.dirty = True
        return self.shadow

    def commit(self):
        """Write the private copy (or the logged stores) back to the argument, then release it."""
        if self.log:
            for target, vals in self.log:
                _assign(self.flat, target, self._to_storage(vals))
            self.reset()
            return
        if not self.dirty:
            self.reset()
            return
        s = self.shadow
        if self.dtype is D.float16:
            s = _numba.float_to_half(s, POOL.empty(s.shape, np.float16))
        elif s.dtype != self.flat.dtype:
            s = s.astype(self.flat.dtype)
        self.flat[...] = s
        if s is not self.shadow:
            POOL.give(s)
        self.reset()


class _Window:
    """Store target: a block of `shape` with element strides `steps` at each offset of `base`."""

    def __init__(self, base, steps, shape):
        self.base, self.steps, self.shape = base, steps, shape

    def index(self, flat: np.ndarray):
        return (_window(flat, self.steps, self.shape), self.base) if self.shape else (flat, self.base)


def _assign(flat, target, vals):
    if isinstance(target, _Window):
        dst, idx = target.index(flat)
        dst[idx] = vals
    else:
        flat[target] = vals


def argument_pointer(buf: Buffer) -> tensor:
    return tensor(None, D.pointer_type(buf.dtype), (), aff=(np.zeros(1, np.int64), ()), buf=buf)


# ---------------------------------------------------------------- pointer arithmetic
def _offsets(p: tensor) -> tensor:
    return tensor(p._v, D.int64, p.shape, aff=p.aff)


def pointer_binary(a, b, op):
    from .ops import binary
    if isinstance(a, tensor) and a.buf is not None and isinstance(b, tensor) and b.buf is not None:
        if op == "sub" and a.buf is b.buf:
            return binary(_offsets(a), _offsets(b), "sub")
        if op in ("eq", "ne", "lt", "le", "gt", "ge") and a.buf is b.buf:
            return binary(_offsets(a), _offsets(b), op)
        raise TypeError(f"unsupported pointer operation '{op}' between two pointers")
    ptr, other, ptr_first = (a, b, True) if isinstance(a, tensor) and a.buf is not None else (b, a, False)
    other = to_tensor(other)
    if not other.dtype.is_int() or other.dtype.is_bool():
        raise TypeError(f"pointer arithmetic needs integer offsets, got {other.dtype}")
    if op not in ("add", "sub") or (op == "sub" and not ptr_first):
        raise TypeError(f"unsupported pointer operation '{op}'")
    r = binary(_offsets(ptr), other, op)
    return tensor(r._v, ptr.dtype, r.shape, aff=r.aff, buf=ptr.buf)


def pointer_where(cond, x, y):
    from .ops import where
    if x.buf is None or y.buf is not x.buf:
        raise TypeError("tl.where on pointers needs two pointers into the same argument")
    r = where(cond, _offsets(x), _offsets(y))
    return tensor(r.v, x.dtype, r.shape, buf=x.buf)


# ---------------------------------------------------------------- access helpers
def _check_pointer(pointer, what):
    if not isinstance(pointer, tensor) or pointer.buf is None:
        raise TypeError(f"tl.{what} expects a pointer (an array argument plus offsets), got {pointer!r}")
    return pointer


def _mask(mask, shape, what):
    if mask is None:
        return None
    m = to_tensor(mask)
    if m.buf is not None:
        raise TypeError(f"tl.{what}: mask must be a boolean block, got a pointer")
    try:
        full = _bshape(m.shape, tuple(shape))
    except ValueError:
        full = None
    if full != tuple(shape):
        raise ValueError(f"tl.{what}: mask of shape {list(m.shape)} does not broadcast to the pointer's shape {list(shape)}")
    v = m.v
    v = v.reshape((v.shape[0],) + (1,) * (len(shape) - len(m.shape)) + m.shape).astype(bool, copy=False)
    return None if v.all() else v


def _window(src, steps, shape):
    """A view with one block-shaped window starting at every element of `src`."""
    item = src.itemsize
    extent = 1 + sum(s * (n - 1) for s, n in zip(steps, shape))
    return as_strided(src, shape=(src.size - extent + 1,) + tuple(shape),
                      strides=(item,) + tuple(s * item for s, n in zip(steps, shape)), writeable=src.flags.writeable)


_DIMS_CACHE: dict = {}


def program_dims(base: np.ndarray):
    """Cached `_program_dims` of the offsets relative to the first program (loops shift them by a
    constant every iteration, which keeps the structure)."""
    rel = base - base[0]
    key = rel.tobytes()
    if key not in _DIMS_CACHE:
        if len(_DIMS_CACHE) > 256:
            _DIMS_CACHE.clear()
        _DIMS_CACHE[key] = _program_dims(rel)
    return _DIMS_CACHE[key]


def _program_dims(base: np.ndarray):
    """Factor per-program offsets as an affine function of mixed-radix program digits.

    Returns (dims, strides), outermost first, with base.reshape(dims) == base[0] +
    sum(digit_i * strides[i]), or None.  Tiled kernels index their operands this way (e.g. A's
    block depends only on pid_m): a strided view over these dims shares each block between
    the programs that use it instead of copying it once per program.
    """
    dims, strides, cur = [], [], base
    while cur.size > 1:
        n, step = cur.size, cur[1] - cur[0]
        off = np.flatnonzero(np.diff(cur) != step)
        run = n if off.size == 0 else int(off[0]) + 1
        for d in range(min(run, n), 1, -1):
            if n % d:
                continue
            rows = cur.reshape(-1, d)
            if (rows - rows[:, :1] == step * np.arange(d)).all():
                break
        else:
            return None
        dims.insert(0, d)
        strides.insert(0, int(step))
        cur = rows[:, 0]
    return dims, strides


def _program_view(src, base, steps, shape):
    if base.shape[0] == 1:
        dims, pstrides = [1], [0]
    else:
        found = program_dims(base)
        if found is None or any(s < 0 for s in found[1]):
            return None
        dims, pstrides = found
    item = src.itemsize
    return as_strided(src[int(base[0]):], shape=tuple(dims) + tuple(shape),
                      strides=tuple(s * item for s in pstrides) + tuple(s * item for s in steps), writeable=False)


def _affine_in_bounds(pointer, n):
    """Bases of an affine pointer whose every lane lies inside the buffer, else None."""
    if pointer.aff is None:
        return None
    c, steps = pointer.aff
    if any(s < 0 for s, k in zip(steps, pointer.shape) if k > 1):
        return None
    steps = tuple(s if k > 1 else 0 for s, k in zip(steps, pointer.shape))
    base = c + pointer.buf.origin
    span = sum(s * (k - 1) for s, k in zip(steps, pointer.shape))
    if base.min() < 0 or base.max() + span >= n:
        return None
    return base, steps


def _raise_oob(pointer, off, bad, n, what):
    ctx = context.current()
    rows = bad.reshape(bad.shape[0], -1)
    row = int(np.argmax(rows.any(1)))
    lane = int(np.argmax(rows[row]))
    o = int(off.reshape(off.shape[0], -1)[min(row, off.shape[0] - 1), lane]) - pointer.buf.origin
    lo, hi = -pointer.buf.origin, n - pointer.buf.origin
    raise OutOfBoundsError(
        f"kernel '{ctx.name}', program {ctx.pid_tuple(row)}: tl.{what} through argument '{pointer.buf.name}' "
        f"is out of bounds: offset {o} (lane {lane} of a block of shape {list(pointer.shape)}) is outside "
        f"[{lo}, {hi}); mask the access or fix the offsets. The launch wrote nothing.")


def _materialized(pointer, m, n, what):
    """Offsets (with masked-off lanes set to 0 after checking the rest) for a gather or scatter."""
    off = pointer.v + pointer.buf.origin
    if m is not None:
        rows = max(off.shape[0], m.shape[0])
        off = np.broadcast_to(off, (rows,) + off.shape[1:])
        m = np.broadcast_to(m, off.shape)
    bad = (off < 0) | (off >= n)
    if m is not None:
        bad &= m
    if bad.any():
        _raise_oob(pointer, off, bad, n, what)
    if m is not None:
        off = np.where(m, off, 0)
    return off, m


# ---------------------------------------------------------------- load / store / atomics
def _count(pointer, m, field):
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
                from .ops import _aff_bounds
                first = _aff_bounds(pointer)[0]
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
    pointer = _check_pointer(pointer, "load")
    buf = pointer.buf
    m = _mask(mask, pointer.shape, "load")
    if context.current().counts is not None:
        _count(pointer, m, "loaded")
        if buf.dtype.kind == "f":  # tracing reads no float data (integers may be indices: those it reads)
            zeros = np.zeros((1,) * (len(pointer.shape) + 1), buf.dtype.container)
            rows = max(pointer.rows, 1 if m is None else m.shape[0])
            return tensor(np.broadcast_to(zeros, (rows,) + tuple(pointer.shape)), buf.dtype, pointer.shape)
    src = buf.data()  # after the tracing exit: a traced launch never converts a half-precision argument
    fast = _affine_in_bounds(pointer, src.size)
    if fast is not None:
        base, steps = fast
        if m is None and pointer.shape and not buf.dirty:
            # the block stays tied to its place in memory: a view shared between programs, and
            # a window description that lets a chain of dots read all its K steps at once
            buf.exported = True
            view = _program_view(src, base, steps, pointer.shape)
            t = tensor.from_view(view, buf.dtype, pointer.shape) if view is not None else \
                tensor(None, buf.dtype, pointer.shape)  # copied from the window only if used alone
            t.win = (src, base, steps)
            return t
        vals = _window(src, steps, pointer.shape)[base] if pointer.shape else src[base]
    else:
        off, m = _materialized(pointer, m, src.size, "load")
        vals = src[off]
    if m is not None:
        fill = np.zeros((), src.dtype) if other is None else to_tensor(other, _like(buf)).v
        fill = fill.astype(src.dtype, copy=False) if hasattr(fill, "astype") else fill
        if isinstance(fill, np.ndarray) and fill.ndim > 1:
            fill = fill.reshape((fill.shape[0],) + (1,) * (len(pointer.shape) + 1 - fill.ndim) + fill.shape[1:])
        vals = np.where(m, vals, fill)
    return tensor(vals, buf.dtype, pointer.shape)


def _like(buf):
    return tensor(None, buf.dtype, ())


def _values_for(pointer, value, what, unrounded_ok=False):
    """The values to store, broadcast to the pointer's rank.  With `unrounded_ok`, fp32 values
    bound for a half-precision argument come back unrounded (the caller rounds them later)."""
    from .ops import cast, Rounding
    buf = pointer.buf
    value = to_tensor(value, _like(buf))
    if value.buf is not None:
        raise TypeError(f"tl.{what}: storing pointers is not supported")
    if value.dtype is not buf.dtype:
        value = cast(value, buf.dtype)
    if unrounded_ok and value._v is None and isinstance(value.lazy, Rounding):
        value = value.lazy.src
    try:
        full = _bshape(value.shape, tuple(pointer.shape))
    except ValueError:
        full = None
    if full != tuple(pointer.shape):
        raise ValueError(f"tl.{what}: value of shape {list(value.shape)} does not broadcast to the pointer's shape "
                         f"{list(pointer.shape)}")
    v = value.v
    return v.reshape((v.shape[0],) + (1,) * (len(pointer.shape) - len(value.shape)) + value.shape)


def store(pointer, value, mask=None, boundary_check=(), cache_modifier="", eviction_policy=""):
    pointer = _check_pointer(pointer, "store")
    buf = pointer.buf
    buf.check_writable()
    vals = _values_for(pointer, value, "store", unrounded_ok=buf.logging)
    m = _mask(mask, pointer.shape, "store")
    if context.current().counts is not None:  # tracing stores nothing (and checks no bounds)
        _count(pointer, m, "stored")
        return None
    n = buf.flat.size
    fast = _affine_in_bounds(pointer, n) if m is None else None
    if fast is not None:
        base, steps = fast
        vals = np.broadcast_to(vals, (max(base.shape[0], vals.shape[0]),) + pointer.shape)
        if base.shape[0] < vals.shape[0]:
            base = np.broadcast_to(base, vals.shape[:1])
        buf.put(_Window(base, steps, pointer.shape), vals)
        return None
    off, m = _materialized(pointer, m, n, "store")
    rows = max(off.shape[0], vals.shape[0])
    off = np.broadcast_to(off, (rows,) + off.shape[1:])
    vals = np.broadcast_to(vals, off.shape)
    if m is None:
        buf.put(off.reshape(-1), vals.reshape(-1))
    else:
        m = np.broadcast_to(m, off.shape)
        buf.put(off[m], vals[m])
    return None


def _atomic(op, pointer, val, mask=None, sem=None, scope=None):
    what = f"atomic_{op}"
    pointer = _check_pointer(pointer, what)
    buf = pointer.buf
    vals = _values_for(pointer, val, what)
    m = _mask(mask, pointer.shape, what)
    _count(pointer, m, "atomics")
    dst = buf.writable()
    off, m = _materialized(pointer, m, dst.size, what)
    rows = max(off.shape[0], vals.shape[0], 1 if m is None else m.shape[0])
    full = (rows,) + tuple(pointer.shape)
    off = np.broadcast_to(off, full).reshape(-1)
    vals = np.broadcast_to(vals, full).reshape(-1)
    old = np.zeros(off.size, dst.dtype)
    sel = np.ones(off.size, bool) if m is None else np.broadcast_to(m, full).reshape(-1)
    old[sel] = _numba.atomic_apply(dst, off[sel], vals[sel], op, buf.dtype is D.float16)
    return tensor(old.reshape(full), buf.dtype, pointer.shape)


def atomic_cas(pointer, cmp, val, sem=None, scope=None):
    """Compare-and-swap, lane by lane in program order; returns the old values."""
    pointer = _check_pointer(pointer, "atomic_cas")
    buf = pointer.buf
    cmps, vals = _values_for(pointer, cmp, "atomic_cas"), _values_for(pointer, val, "atomic_cas")
    _count(pointer, None, "atomics")
    dst = buf.writable()
    off, _ = _materialized(pointer, None, dst.size, "atomic_cas")
    full = (max(off.shape[0], cmps.shape[0], vals.shape[0]),) + tuple(pointer.shape)
    old = _numba.atomic_cas(dst, np.broadcast_to(off, full).reshape(-1), np.broadcast_to(cmps, full).reshape(-1),
                            np.broadcast_to(vals, full).reshape(-1))
    return tensor(old.reshape(full), buf.dtype, pointer.shape)


def atomic_add(pointer, val, mask=None, sem=None, scope=None):
    return _atomic("add", pointer, val, mask)


def atomic_max(pointer, val, mask=None, sem=None, scope=None):
    return _atomic("max", pointer, val, mask)


def atomic_min(pointer, val, mask=None, sem=None, scope=None):
    return _atomic("min", pointer, val, mask)


def atomic_xchg(pointer, val, mask=None, sem=None, scope=None):
    return _atomic("xchg", pointer, val, mask)
