"""The memory behind kernel arguments, and strided windows into it.

Each array argument becomes a `Buffer`: the argument's name, element type and where its
element 0 sits in a `Storage`, a flat view of the memory (like a device pointer, so strided
and transposed views work with strides passed as ints).  Arguments that overlap in memory
share one Storage, so a store through one view is seen by loads through the other, as on a
GPU.  Stores go to a private copy that is written back only when the whole launch has
succeeded; an error anywhere leaves every argument untouched.
"""
from __future__ import annotations

import sys

import numpy as np
from numpy.lib.stride_tricks import as_strided as _np_as_strided

from . import dtypes as D
from . import fast_loops
from .tensor import FROM_ABOVE, round_to, POOL


class OutOfBoundsError(IndexError):
    """An unmasked load or store touched memory outside its argument (defined beside the
    buffers it guards; memory and addresses raise it)."""



def as_strided(x: np.ndarray, shape, strides, writeable=True) -> np.ndarray:
    """numpy's as_strided, also for ml_dtypes' element types (bf16, fp8), which numpy's array
    interface cannot describe: those go through unsigned integers of the same width.  A view that
    stays inside a flat array's own memory (every load's and store's window) is made by the
    ndarray constructor directly: a tenth of as_strided's cost, paid by every access."""
    if x.ndim == 1 and x.dtype.isbuiltin == 1 and x.flags.c_contiguous and min(strides, default=0) >= 0:
        need = sum((n - 1) * s for n, s in zip(shape, strides)) + x.itemsize if all(shape) else 0
        if need <= x.nbytes:
            out = np.ndarray(shape, x.dtype, x, 0, strides)
            if not writeable:
                out.flags.writeable = False
            return out
    if x.dtype.isbuiltin == 1:  # ml_dtypes types are user-defined (2)
        return _np_as_strided(x, shape=shape, strides=strides, writeable=writeable)
    raw = x.view(np.dtype(f"u{x.dtype.itemsize}"))
    return _np_as_strided(raw, shape=shape, strides=strides, writeable=writeable).view(x.dtype)


def flat_view(name, a: np.ndarray):
    """(a flat view starting at a's lowest element, index of a's element 0 in it)."""
    if a.flags.c_contiguous:  # the usual argument: the array itself, flattened (no numpy helper calls)
        return a.reshape(-1), 0
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


def address_of(flat: np.ndarray) -> int:
    return flat.__array_interface__["data"][0]


class Storage:
    """Flat memory shared by the arguments that live in it, with the launch's private copy."""

    def __init__(self, flat: np.ndarray, dtype, names):
        self.flat, self.dtype, self.names = flat, dtype, names
        self.conflict = None  # why stores are refused (overlapping arguments of different types)
        self.reset()

    def reset(self):
        """Drop the private copy (its memory goes back to the pool unless a view still uses it)."""
        shadow = getattr(self, "shadow", None)
        if shadow is not None and getattr(self, "private", False) and sys.getrefcount(shadow) <= 3:
            POOL.give(shadow)
        self.shadow, self.private, self.dirty, self.exported = None, False, False, False
        self.log = []  # stores to a storage never read in this launch: applied straight at commit

    @property
    def logging(self):
        """Stores are still only logged (converted to the storage dtype at commit)."""
        return self.shadow is None

    def put(self, target, vals):
        """Store `vals` at `target` (a Window or flat offsets).  Until the storage is read, stores
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
            half = self.dtype.is_floating() and self.dtype.bits <= 16
            for target, vals in log:  # logged values may be unrounded fp32 (see store)
                _assign(dst, target, round_to(vals, self.dtype) if half else vals)   # (a Region is never half: memory._whole_region)
        if self.shadow is None:
            if self.flat.dtype == self.dtype.container:
                self.shadow = self.flat
            else:
                self.shadow = self._convert_in()
                self.private = True
        return self.shadow

    def _convert_in(self):
        if self.dtype is D.float16:
            return fast_loops.half_to_float(self.flat, POOL.empty(self.flat.shape, np.float32))
        if self.flat.dtype == self.dtype.np:
            return self.dtype.decode(self.flat)
        return self.flat.astype(self.dtype.container)

    def _to_storage(self, vals):
        if self.dtype is D.float16:
            return fast_loops.float_to_half(np.ascontiguousarray(vals))
        if self.flat.dtype == self.dtype.np:
            return self.dtype.encode(vals)
        return vals.astype(self.flat.dtype, copy=False)

    def writable(self) -> np.ndarray:
        """The private copy that stores go to.  Loaded blocks may be views of the current
        shadow (`exported`): then the first store copies it, so those blocks keep the values
        they had when loaded."""
        data = self.data()
        if not self.private or self.exported:
            self.shadow = POOL.empty(data.shape, data.dtype)
            self.shadow[...] = data
            self.private, self.exported = True, False
        self.dirty = True
        return self.shadow

    def commit(self):
        """Write the private copy (or the logged stores) back to memory, then release it."""
        if self.log:
            log, self.log = self.log, []
            for i in range(len(log)):             # in order: a later store to the same place wins
                (target, vals), log[i] = log[i], None
                if isinstance(target, Region):
                    target.fill(self.flat, vals)
                    continue
                _assign(self.flat, target, self._to_storage(vals))
                root = vals
                while isinstance(root.base, np.ndarray):
                    root = root.base
                del vals
                if root.flags.owndata and root.flags.writeable and sys.getrefcount(root) <= 2:
                    POOL.give(root)                 # a block nothing else holds: the next launch reuses it
                del root
            self.reset()
            return
        if not self.dirty:
            self.reset()
            return
        s = self.shadow
        if self.dtype is D.float16:
            s = fast_loops.float_to_half(s, POOL.empty(s.shape, np.float16))
        elif s.dtype != self.flat.dtype:
            s = self.dtype.encode(s) if self.flat.dtype == self.dtype.np else s.astype(self.flat.dtype)
        self.flat[...] = s
        if s is not self.shadow:
            POOL.give(s)
        self.reset()


class Buffer:
    """One array argument: its element 0 is `storage` index `origin`; it spans [lo, hi)."""

    def __init__(self, name: str, array: np.ndarray, storage: Storage, origin: int, lo: int, hi: int):
        self.name, self.storage = name, storage
        self.dtype = D.from_numpy(array.dtype)
        self.origin, self.lo, self.hi = origin, lo, hi
        self.writeable = bool(array.flags.writeable)

    def check_writable(self):
        if not self.writeable:
            raise ValueError(f"argument '{self.name}' is read-only but the kernel stores to it")
        if self.storage.conflict:
            raise NotImplementedError(self.storage.conflict)


def bind_buffers(arrays: dict) -> dict:
    """name -> Buffer for every array argument.  Arguments whose memory overlaps share one
    Storage (the same array passed twice, or two views of one array)."""
    views = {}
    for name, a in arrays.items():
        flat, origin = flat_view(name, a)
        start = address_of(flat)
        views[name] = (a, flat, origin, start, start + flat.size * flat.itemsize)
    # group overlapping byte ranges (sorted sweep)
    groups, end = [], None
    for name in sorted(views, key=lambda n: views[n][3]):
        _, flat, _, start, stop = views[name]
        if groups and flat.size and start < end:
            groups[-1].append(name)
            end = max(end, stop)
        else:
            groups.append([name])
            end = stop
    out = {}
    for names in groups:
        first = views[names[0]]
        dtypes = {views[n][0].dtype for n in names}
        item = first[1].itemsize
        aligned = len(dtypes) == 1 and all((views[n][3] - first[3]) % item == 0 for n in names)
        if len(names) == 1 or not aligned:
            for n in names:
                a, flat, origin, _, _ = views[n]
                st = Storage(flat, D.from_numpy(a.dtype), [n])
                if len(names) > 1:
                    st.conflict = (f"arguments {names} overlap in memory with different element types or "
                                   f"misaligned offsets; storing through them is not supported")
                out[n] = Buffer(n, a, st, origin, 0, flat.size)
            continue
        stop = max(views[n][4] for n in names)
        extent = (stop - first[3]) // item
        writeable = bool(first[1].flags.writeable)
        flat = as_strided(first[1], shape=(extent,), strides=(item,), writeable=writeable)
        st = Storage(flat, D.from_numpy(first[0].dtype), names)
        if not writeable and any(views[n][1].flags.writeable for n in names):
            st.conflict = f"arguments {names} overlap in memory and the lowest one is read-only; storing is not supported"
        for n in names:
            a, f, origin, start, _ = views[n]
            lo = (start - first[3]) // item
            out[n] = Buffer(n, a, st, lo + origin, lo, lo + f.size)
    return out


class Window:
    """Store target: a block of `shape` with element strides `steps` at each offset of `base`."""

    def __init__(self, base, steps, shape):
        self.base, self.steps, self.shape = base, steps, shape

    def index(self, flat: np.ndarray):
        return (window(flat, self.steps, self.shape), self.base) if self.shape else (flat, self.base)


class Region:
    """Store target: dense blocks of `shape` (programs, *block) from `start`, one program's
    `gap` elements after the last's, filled by computing a deferred expression into them
    (memory._whole_region)."""

    def __init__(self, start, gap, shape):
        self.start, self.gap, self.shape = start, gap, shape

    def fill(self, flat, expression):
        block = int(np.prod(self.shape[1:]))
        rows = _np_as_strided(flat[self.start:], shape=(self.shape[0], block),
                              strides=(self.gap * flat.itemsize, flat.itemsize))
        expression.evaluate(out=rows.reshape(self.shape))   # splits the contiguous block: a view


def _assign(flat, target, vals):
    if isinstance(target, Region):
        target.fill(flat, vals)
    elif isinstance(target, Window):
        dst, idx = target.index(flat)
        dst[idx] = vals
    else:
        flat[target] = vals


def window(src, steps, shape):
    """A view with one block-shaped window starting at every element of `src`."""
    item = src.itemsize
    extent = 1 + sum(s * (n - 1) for s, n in zip(steps, shape))
    return as_strided(src, shape=(src.size - extent + 1,) + tuple(shape),
                      strides=(item,) + tuple(s * item for s, n in zip(steps, shape)), writeable=src.flags.writeable)


class Sources:
    """Per-program source arrays for loaded blocks that live in different arrays (pointers built
    from addresses): program p's block is a window of arrays[which[p]]."""

    def __init__(self, arrays, which: np.ndarray):
        self.arrays, self.which = tuple(arrays), which

    def __eq__(self, other):
        return isinstance(other, Sources) and len(other.arrays) == len(self.arrays) \
            and all(a is b for a, b in zip(self.arrays, other.arrays)) and np.array_equal(self.which, other.which)

    __hash__ = None

    def subset(self, sel):
        return Sources(self.arrays, self.which[sel])


def same_source(a, b) -> bool:
    return a is b or (isinstance(a, Sources) and a == b)


def windows(src, base, steps, shape) -> np.ndarray:
    """The block at each of `base` (one per program), gathered into one array."""
    if not isinstance(src, Sources):
        return window(src, steps, shape)[base]
    out = None
    for k in np.unique(src.which):
        rows = src.which == k
        part = window(src.arrays[k], steps, shape)[base[rows]]
        if out is None:
            out = np.empty((base.shape[0],) + tuple(shape), part.dtype)
        out[rows] = part
    return out


def one_window(src, base, steps, shape, p) -> np.ndarray:
    """Program p's block, as a view."""
    array = src.arrays[src.which[p]] if isinstance(src, Sources) else src
    return window(array, steps, shape)[int(base[p])]


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


def program_view(src, base, steps, shape):
    """A read-only view shaped (*program_dims, *shape) of the block at each of `base`, or None."""
    if isinstance(src, Sources):
        return None
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


FROM_ABOVE["windows"] = windows   # tensor.v of a block loaded as windows into an argument
