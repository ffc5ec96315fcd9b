"""Block values, held for every program of a launch at once.

A `tensor` stores `v`, a numpy array of shape ``(R, *shape)``: one row per program running in
lockstep (R = P), or a single row shared by all of them (R = 1, a *uniform* value).  Integer
tensors may also carry an affine description ``aff = (c, steps)`` meaning
``v[p, i, j, ...] = c[p] + steps[0]*i + steps[1]*j + ...``; index arithmetic in kernels
(`pid * BLOCK + arange(...)`, `offs[:, None] * stride + ...`) keeps it, so loads and stores
can read a block as a strided view instead of gathering element by element, and the
executor never materialises index arrays it does not need.  Integers that are not affine but
step evenly along one axis (an embedding's `idx[:, None] * D + cols[None, :]`) carry `runs =
(starts, axis, step)` instead of `v`: ``v = starts + step * (index along axis)``; a load through
them reads one strided run per start, once for programs that read the same runs, and returns
`shared = (blocks, which)`: program p's value is ``blocks[which[p]]``, which a dot multiplies as
one GEMM over the distinct blocks.  A boolean block that keeps one box of lanes in each program
(a tile's edge mask, `(rows[:, None] < M) & (cols[None, :] < N)`) may carry `box = (lo, hi)`
instead of `v`: per program and axis, the lanes [lo, hi) are True (boxes.box_compare makes
them, boxes.box_and intersects them), so that a masked load or store finds each program's window
without building and scanning a block of lanes.  Any of these is turned into `v` when something
asks for it.

Control flow that asks a tensor for a Python value (`if`, `while`, `range`) works when the
value is the same in every program; otherwise `Divergent` is raised and the launch falls
back to running one program at a time.
"""
from __future__ import annotations

import math
import sys
import threading

import numpy as np

from . import context
from . import dtypes as D
from .dtypes import constexpr
from . import fast_loops


class Divergent(Exception):
    """Control flow depends on the program id: the launch must run programs one at a time."""


class Stalled(Divergent):
    """Programs wait on programs that are parked after the same loop (a lock held by one of
    them): fewer programs at a time may run, the one holding the lock in a group of its own.
    `through`: how many programs got through the loop before it stalled (as many as there are
    locks, say): groups of that size are likely to run."""

    def __init__(self, message, through=0):
        super().__init__(message)
        self.through = through


class MemoryPressure(Exception):
    """Lockstep values of this many programs would not fit: run fewer programs at a time."""


# one value of a lockstep group larger than this (every program's block of it) asks the launch
# to run fewer programs at a time (jit.py): 4,096 programs reducing 2**20-element blocks would
# otherwise make 16 GB values, where a GPU holds one block per running program
LOCKSTEP_VALUE_BYTES = 256 << 20


def check_lockstep_bytes(rows: int, nbytes: int):
    """Raise MemoryPressure before making a value of `nbytes` for `rows` programs that is over budget."""
    if rows > 1 and nbytes > LOCKSTEP_VALUE_BYTES:
        raise MemoryPressure(f"a value of {nbytes >> 20} MB for {rows} programs in lockstep")


def check_lockstep_result(shape, itemsize: int, *aligned):
    """check_lockstep_bytes for a result of block `shape` made from arrays aligned to it (one row
    each, or one per program)."""
    rows = max([a.shape[0] for a in aligned if a.ndim] or [1])
    if rows > 1:
        check_lockstep_bytes(rows, rows * math.prod(shape) * itemsize)


def round_to(x: np.ndarray, dt) -> np.ndarray:
    """Round container values to the precision of `dt`."""
    if dt is D.float16:
        return fast_loops.round_to_half(x)
    if dt is D.bfloat16:
        return np.asarray(x, np.float32).astype(D.bfloat16.np).astype(np.float32)
    if dt is D.float8e4b15:
        return dt.decode(dt.encode(x))
    if dt.kind == "f" and dt.bits == 8:
        top = _FP8_MAX[dt.name]
        return np.clip(np.asarray(x, np.float32), -top, top).astype(dt.np).astype(np.float32)
    return x.astype(dt.container, copy=False)


_FP8_MAX = {d.name: np.float32(D.ml_dtypes.finfo(d.np).max) for d in D.FP8 if d is not D.float8e4b15}


def broadcast_rows(a: np.ndarray, shape: tuple) -> np.ndarray:
    """`a` broadcast to `shape`: itself when it has that shape, a copy when the result is small
    (a per-program scalar, a flag: numpy's broadcast_to costs a fixed few microseconds, more than
    copying a few thousand elements, and the hot paths of locks and atomics call it several times
    a round), else a read-only view (also for `a` of lower rank).  Callers never write into
    the result."""
    if a.shape == shape:
        return a
    if a.ndim == len(shape) and a.shape[0] == 1 and a.shape[1:] == shape[1:] and a.size * shape[0] <= 4096:
        return a.repeat(shape[0], axis=0)
    return np.broadcast_to(a, shape)


class _ArrayPool(threading.local):
    """Recycles the big arrays that tensors own outright (e.g. a matmul accumulator).

    `acc = tl.dot(a, b, acc)` drops the old accumulator every step; handing its array to the
    next step instead of freeing it avoids the page faults of a fresh multi-megabyte
    allocation, which otherwise cost as much as the arithmetic.
    """
    LIMIT = 256 << 20

    def __init__(self):
        self.free, self.bytes = {}, 0

    def empty(self, shape, dtype) -> np.ndarray:
        stack = self.free.get((shape, np.dtype(dtype).str))
        if stack:
            a = stack.pop()
            self.bytes -= a.nbytes
            return a
        return np.empty(shape, dtype)

    def give(self, a: np.ndarray):
        """Keep `a` for the next request of its shape.  When the pool is full, the arrays of the
        shapes given back longest ago make room (a kernel that ran before, with blocks of another
        shape, must not keep this one's arrays out)."""
        if a.nbytes < 1 << 16 or a.nbytes > self.LIMIT:
            return
        key = (a.shape, a.dtype.str)
        stack = self.free.pop(key, [])
        for other in list(self.free):          # oldest first
            if self.bytes + a.nbytes <= self.LIMIT:
                break
            for old in self.free.pop(other):
                self.bytes -= old.nbytes
        if self.bytes + a.nbytes <= self.LIMIT:
            stack.append(a)
            self.bytes += a.nbytes
        self.free[key] = stack                 # the most recent shape last


POOL = _ArrayPool()
_UNIFORM_INDEX: dict = {}


class Shape(tuple):
    """A block shape: a tuple that also compares equal to a list, as Triton's shapes do."""
    __slots__ = ()

    def __eq__(self, other):
        return tuple.__eq__(self, tuple(other) if type(other) is list else other)

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = tuple.__hash__

    def __getitem__(self, index):
        got = tuple.__getitem__(self, index)
        return Shape(got) if isinstance(index, slice) else got

    def __add__(self, other):
        """`x.shape[:-1] + [32]`: Triton's shape joins a list or a tuple (triton_kernels' vpopc)."""
        if not isinstance(other, (list, tuple)):
            return NotImplemented
        return Shape(tuple(self) + tuple(other))

    def __radd__(self, other):
        if not isinstance(other, (list, tuple)):
            return NotImplemented
        return Shape(tuple(other) + tuple(self))


class Slice:
    """`tl.slice(start, stop, step)`: newer Triton's slice value (its front end makes one of
    `x[a:b]`).  Blocks and tuples are indexed by it as by Python's slice of the same bounds."""

    def __init__(self, start, stop, step):
        self.start, self.stop, self.step = start, stop, step

    def as_slice(self) -> slice:
        return slice(D.constexpr_value(self.start), D.constexpr_value(self.stop), D.constexpr_value(self.step))

    def __repr__(self):
        return f"tl.slice({self.start!r}, {self.stop!r}, {self.step!r})"


class TritonTuple(tuple):
    """`tl.tuple`: a tuple of kernel values (Triton's front end wraps every tuple in one).  It
    is a Python tuple, so it indexes, unpacks, compares and concatenates as one, and it is
    immutable as Triton's is: `t[0] = x` in a kernel is refused.  `tl.tuple(iterable)`; made
    from a named tuple (an aggregate's tuple field) it keeps the names: `t.x` is `t[0]`."""

    def __new__(cls, args=(), type=None, names=None):
        out = super().__new__(cls, args)
        out.names = tuple(names) if names is not None else None
        return out

    def __init__(self, args=(), type=None, names=None):
        pass

    def __getattr__(self, name):
        names = self.__dict__.get("names")
        if names and name in names:
            return self[names.index(name)]
        raise AttributeError(f"tl.tuple has no attribute {name!r}")

    def __getitem__(self, index):
        if isinstance(index, Slice):
            index = index.as_slice()
        got = tuple.__getitem__(self, index)        # a constexpr index is an int (__index__)
        return TritonTuple(got) if isinstance(index, slice) else got

    def __add__(self, other):
        return TritonTuple(tuple(self) + tuple(other))

    def __radd__(self, other):
        return TritonTuple(tuple(other) + tuple(self))

    def __repr__(self):
        return f"({', '.join(repr(x) for x in self)}{',' if len(self) == 1 else ''})"


# numpy ufuncs that a Python operator between a numpy scalar and a block calls: they are the
# operator, applied the block's way; any other numpy function on a block is refused
_OPERATOR_UFUNCS = {np.add: "add", np.subtract: "sub", np.multiply: "mul", np.true_divide: "truediv",
                    np.floor_divide: "floordiv", np.remainder: "mod", np.power: "pow", np.bitwise_and: "and",
                    np.bitwise_or: "or", np.bitwise_xor: "xor", np.left_shift: "lshift", np.right_shift: "rshift",
                    np.less: "lt", np.less_equal: "le", np.greater: "gt", np.greater_equal: "ge", np.equal: "eq",
                    np.not_equal: "ne"}
_REFLECTED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}


def _not_in_kernels(what: str):
    return TypeError(f"{what} cannot run on a block inside a minitriton kernel: Triton compiles only "
                     f"triton.language operations (use tl.* or tl.math.*, e.g. tl.sin, tl.sum, tl.where)")


MAX_BLOCK_NUMEL = 1 << 20   # Triton's TRITON_MAX_TENSOR_NUMEL: no block holds more elements


def broadcast_shape(a, b):
    """numpy's broadcasting rule on shape tuples (a hot path: kept free of numpy calls)."""
    if a == b:
        return a
    if len(a) != len(b):
        n = max(len(a), len(b))
        a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    out = []
    for x, y in zip(a, b):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise ValueError(f"incompatible block shapes {list(a)} and {list(b)}")
    out = tuple(out)
    if math.prod(out) > MAX_BLOCK_NUMEL:
        raise ValueError(f"a block of shape {list(out)} has {math.prod(out):,} elements, more than Triton's limit of "
                         f"{MAX_BLOCK_NUMEL:,} (TRITON_MAX_TENSOR_NUMEL)")
    return out


def _ramp(n, axis, ndim) -> np.ndarray:
    """0, 1, ..., n - 1 (int64) along `axis` of a block of `ndim` axes, one row: (1, ..., n, ...)."""
    return np.arange(n, dtype=np.int64).reshape((1,) * (axis + 1) + (n,) + (1,) * (ndim - axis - 1))


def box_values(lo, hi, shape) -> np.ndarray:
    """The lanes of a box mask (tensor.box): True where every axis's index lies in [lo, hi) of its
    program (lo, hi: (rows, len(shape)) integers), as a (rows, *shape) bool array.  An axis that
    every program keeping lanes keeps whole is a broadcast (stride 0) of the others' answer, as
    the lane-by-lane `&` with a mask decided along it gives (fusion compares masks cut so)."""
    per_program = (-1,) + (1,) * len(shape)
    some = (hi > lo).all(axis=1)
    out = None if some.all() else some.reshape(per_program)
    for d, n in enumerate(shape):
        if ((lo[some, d] == 0) & (hi[some, d] == n)).all():
            continue
        ramp = _ramp(n, d, len(shape))
        kept = (ramp >= lo[:, d].reshape(per_program)) & (ramp < hi[:, d].reshape(per_program))
        out = kept if out is None else out & kept
    if out is None:
        out = np.ones((1,) * (len(shape) + 1), bool)
    return np.broadcast_to(out, (lo.shape[0],) + tuple(shape))


def run_values(starts, axis, step, shape) -> np.ndarray:
    """The integers of runs (tensor.runs): starts (rows, *shape with 1 at `axis`) plus `step`
    times the index along `axis`, as a (rows, *shape) int64 view."""
    return np.broadcast_to(starts + _ramp(shape[axis], axis, len(shape)) * step, (starts.shape[0],) + tuple(shape))


class tensor:
    __slots__ = ("_v", "dtype", "shape", "aff", "buf", "pv", "owned", "win", "lazy", "runs", "shared", "box", "every")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """`np.float32(2) * x` is the operator (numpy asks us first); `np.sin(x)` is refused."""
        name = _OPERATOR_UFUNCS.get(ufunc)
        if name is None or method != "__call__" or kwargs or len(inputs) != 2:
            raise _not_in_kernels(f"numpy's {ufunc.__name__}")
        a, b = (v[()] if type(v) is np.ndarray and v.ndim == 0 else v for v in inputs)  # numpy's 0-d scalars
        if a is self:
            return getattr(self, f"__{name}__")(b)
        if name in _REFLECTED:
            return getattr(self, f"__{_REFLECTED[name]}__")(a)
        return getattr(self, f"__r{name}__")(a)

    def __array_function__(self, func, types, args, kwargs):
        raise _not_in_kernels(f"numpy's {func.__name__}")

    def __array__(self, dtype=None, copy=None):
        raise _not_in_kernels("converting to a numpy array (np.asarray, np.array)")

    def __init__(self, v, dtype, shape, aff=None, buf=None):
        shape = shape if type(shape) is Shape else Shape(shape)
        if aff is None and not shape and v is not None and (buf is not None or dtype.kind in "iu"):
            aff = (v.reshape(-1).astype(np.int64), ())  # integer scalars are trivially affine
        self._v, self.dtype, self.shape, self.aff, self.buf = v, dtype, shape, aff, buf
        self.pv = None  # optional view shaped (*program_dims, *shape): blocks shared by programs, not copied
        self.owned = False  # _v came from POOL and nothing else refers to it
        self.win = None     # for a loaded block: (source array, per-program base offsets, element steps)
        self.lazy = None    # a deferred computation (dot.DotChain) that produces _v when first needed
        self.runs = None    # (starts, axis, step): integers stepping evenly along one axis (affine.runs_of)
        self.shared = None  # (blocks, which): program p's value is blocks[which[p]] (gathers.py)
        self.box = None     # (lo, hi): a bool block True in the box [lo, hi) of each program (boxes.py)
        self.every = False  # a mask found true in every lane (memory.access_mask): not looked at again

    def __del__(self):
        if self.owned:
            v = self._v
            # referents: our slot, the local name, getrefcount's argument; any view or sharer adds one
            if v is not None and sys.getrefcount(v) <= 3:
                POOL.give(v)

    # -- values -----------------------------------------------------------------------
    @classmethod
    def from_view(cls, pv, dtype, shape):
        """A tensor whose rows are a strided view over program dimensions (see memory.load)."""
        t = cls(None, dtype, shape)
        t.pv = pv
        return t

    @classmethod
    def deferred(cls, lazy, dtype, shape):
        t = cls(None, dtype, shape)
        t.lazy = lazy
        return t

    @property
    def v(self) -> np.ndarray:
        if self._v is None and self.lazy is not None:
            self._v, self.lazy = self.lazy.evaluate(), None
            self.owned = True
        elif self._v is None and self.pv is not None:
            self._v = self.pv.reshape((-1,) + self.shape)
        elif self._v is None and self.win is not None:
            src, base, steps = self.win
            self._v = FROM_ABOVE["windows"](src, base, steps, self.shape)
        elif self._v is None and self.runs is not None:
            self._v = self._from_runs()
        elif self._v is None and self.shared is not None:
            blocks, which = self.shared
            self._v = blocks[which]
        elif self._v is None and self.box is not None:
            self._v = box_values(*self.box, self.shape)
        elif self._v is None:
            c, steps = self.aff
            if c.shape[0] == 1:  # a uniform index block (an arange, say): built once, reused
                key = (int(c[0]), steps, self.shape, self.container)
                self._v = _UNIFORM_INDEX.get(key)
                if self._v is None:
                    if len(_UNIFORM_INDEX) > 1024:
                        _UNIFORM_INDEX.clear()
                    self._v = _UNIFORM_INDEX[key] = self._materialize()
            else:
                self._v = self._materialize()
        return self._v

    def _from_runs(self):
        return run_values(*self.runs, self.shape).astype(self.container)

    def _materialize(self):
        c, steps = self.aff
        if not self.shape:  # a scalar per program (a count, a flag, a pointer): its values as they are
            out = c.astype(self.container)
            out.flags.writeable = False
            return out
        # summed in the block's own integer type: wrapping there gives the bits of the int64 sum
        # cast down, with half the memory traffic (and no cast) for an int32 block
        kind = self.container if np.dtype(self.container).kind in "iu" else np.int64
        out = c.astype(kind, copy=False).reshape((-1,) + (1,) * len(self.shape))
        for d, (n, s) in enumerate(zip(self.shape, steps)):
            if s and n > 1:
                idx = (np.arange(n, dtype=np.int64) * s).astype(kind, copy=False)
                out = out + idx.reshape((1,) + (1,) * d + (n,) + (1,) * (len(self.shape) - d - 1))
        out = np.broadcast_to(out, (out.shape[0],) + self.shape).astype(self.container, copy=False)
        out.flags.writeable = False
        return out

    @property
    def container(self):
        return np.int64 if self.buf is not None else self.dtype.container

    @property
    def rows(self) -> int:
        if self._v is not None:
            return self._v.shape[0]
        if self.lazy is not None:
            return self.lazy.rows
        if self.win is not None and self.aff is None:
            return self.win[1].shape[0]
        if self.pv is not None:
            return math.prod(self.pv.shape[:self.pv.ndim - len(self.shape)])
        if self.runs is not None:
            return self.runs[0].shape[0]
        if self.shared is not None:
            return self.shared[1].shape[0]
        if self.box is not None:
            return self.box[0].shape[0]
        return self.aff[0].shape[0]

    @property
    def numel(self):
        return math.prod(self.shape)

    @property
    def type(self):
        """Triton's `x.type`: a block's block_type (element type and shape), a scalar's dtype."""
        return D.block_type(self.dtype, self.shape) if self.shape else self.dtype

    def __repr__(self):
        return f"tensor({self.dtype}, shape={list(self.shape)})"

    # -- Python control flow ------------------------------------------------------------
    def _uniform_scalar(self, what):
        if self.shape:
            raise TypeError(f"cannot use a block of shape {list(self.shape)} as {what}; reduce it first")
        v = self.v.reshape(-1)
        if v.size > 1:
            active = getattr(context.LOCAL, "state", None)
            active = active.active if active is not None else None
            if active is not None and active.shape[0] == v.size:
                v = v[active] if active.any() else v[:1]
            if v.size > 1 and not (v == v[0]).all():
                raise Divergent(what)
        return v[0].item()

    def __bool__(self):
        return bool(self._uniform_scalar("a condition"))

    def __index__(self):
        if not self.dtype.is_int():
            raise TypeError(f"a {self.dtype} value cannot be used as an integer (loop bound or index)")
        return int(self._uniform_scalar("a loop bound or index"))

    __int__ = __index__

    def __float__(self):
        return float(self._uniform_scalar("a float"))

    def __iter__(self):
        raise TypeError("tensors are not iterable inside a kernel; use tl.range or tl.static_range")

    # -- operators and methods: supplied by the layers above (see FROM_ABOVE) -------------
    def __getattr__(self, name):
        # Triton's tensor methods: x.sum(axis=0), x.broadcast_to(...), x.cast(...), x.sort(), ...
        fn = FROM_ABOVE["methods"].get(name)
        if fn is not None:
            return lambda *args, **kw: fn(self, *args, **kw)
        raise AttributeError(f"'tensor' object has no attribute {name!r}")


# One table of behaviour that block values (and the operations on them) need from the layers
# above, filled by those layers as they load: a lower layer reads it and never imports upward.
# arithmetic attaches the operators, casts `to` and shapes `[]`, `.T`, `reshape` to the class
# itself (as Python wants dunder methods); the rest is looked up here by name:
#   "methods"            Triton's tensor methods, name -> function (filled by language/)
#   "windows"            a windowed block's values (buffers)
#   "pointer_binary"     arithmetic with a pointer operand (memory)
#   "pointer_where"      tl.where between pointers (memory)
#   "cast_from_pointer", "cast_to_pointer"   pointer casts (addresses)
#   "fuse_accumulate"    acc + tl.dot(...) as one deferred chain (dot)
FROM_ABOVE: dict = {"methods": {}}


class _Poison:
    """What a jitted function gives back when the path taken reaches its end without `return
    value` although it returns a value on another path (Triton's `ub.poison`).  Storing it
    stores nothing (any value may land; the memory's own is one); computing with it is refused."""

    def __repr__(self):
        return "<undefined result>"


POISON = _Poison()


def uniform(value, dtype) -> tensor:
    """A value shared by all programs."""
    return tensor(np.asarray(value, dtype.container).reshape(1), dtype, ())


def scalar_dtype(x):
    """The type of a number used as a tensor: Triton's rule for Python numbers, its own for numpy's."""
    if isinstance(x, np.generic):
        return D.from_numpy(x.dtype)
    if isinstance(x, (bool, int, float)):
        return D.literal_dtype(x)
    if x is POISON:
        raise TypeError("cannot compute with an undefined result: a jitted function returned without a value on "
                        "the path the programs took (it returns one on another path)")
    raise TypeError(f"cannot use {type(x).__name__} value {x!r} in a kernel expression")


def is_number(x) -> bool:
    """A Python number or constexpr: weakly typed, it takes the type of the tensor it meets."""
    if isinstance(x, constexpr):
        x = x.value
    return isinstance(x, (bool, int, float)) and not isinstance(x, np.generic)


def compile_time_int(value, what: str, message: str | None = None) -> int:
    """An integer Triton needs at compile time (a block's shape, a reduction's axis, a
    permutation): refused when it is a runtime scalar (a loaded value, a non-constexpr argument),
    which Triton cannot compile and which here would quietly take the value the programs share."""
    value = D.constexpr_value(value)
    if isinstance(value, tensor):
        raise TypeError(message or f"{what} must be a constexpr (known when the kernel compiles), got a runtime "
                                   f"value {value!r}")
    return int(value)


def shape_element(value, i: int) -> int:
    """Element i of a block shape, refused as a runtime value with Triton's message."""
    return compile_time_int(value, f"shape element {i}",
                            f"Shape element {i} must have type `constexpr[int]`, got `constexpr[{tensor}]`: a block's "
                            f"shape is fixed when the kernel compiles, so it cannot come from a runtime value")


def to_tensor(x, like: tensor | None = None) -> tensor:
    """Wrap a number.  A Python number meeting a tensor `like` takes its type where
    dtypes.number_takes says so, as in Triton, and must fit in it."""
    if isinstance(x, tensor):
        return x
    if isinstance(x, constexpr):
        x = x.value
    dt = scalar_dtype(x)
    if like is not None and like.buf is None and not isinstance(x, np.generic) \
            and D.number_takes(dt, like.dtype):
        dt = like.dtype
    if dt.is_int():
        x = int(x)
        lo, hi = D.int_range(dt)
        if not lo <= x <= hi:
            raise ValueError(f"scalar {x} is out of range for type {dt}")
        if not dt.is_bool() and dt is not D.uint64:
            return tensor(None, dt, (), aff=(np.array([x], np.int64), ()))
    return uniform(x, dt)


def argument(x, dt=None) -> tensor:
    """A scalar kernel argument, typed as Triton types them (ints int32 or int64, floats fp32),
    or as `dt`, the type its parameter's annotation names (dtypes.annotated_type)."""
    if dt is None:
        dt = D.argument_dtype(x)
    elif dt.is_int():
        if not isinstance(x, (bool, int, np.integer, np.bool_)):
            raise TypeError(f"{x!r} cannot be passed as {dt}, the parameter's annotated type: it is not an integer")
        lo, hi = D.int_range(dt)
        if not lo <= int(x) <= hi:
            raise OverflowError(f"{x} does not fit {dt}, the parameter's annotated type")
    else:           # rounded to the annotated floating type
        x = np.asarray(x, dt.np).astype(dt.container)
    if dt.is_int() and not dt.is_bool() and dt is not D.uint64:
        return tensor(None, dt, (), aff=(np.array([int(x)], np.int64), ()))
    return uniform(x, dt)
