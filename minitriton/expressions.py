"""Elementwise float arithmetic on big blocks, deferred and run as one compiled loop.

A normalisation kernel's arithmetic is a string of elementwise steps,

    y = (x - mean) * rstd * w + b

and numpy runs each step as a pass over memory, writing a temporary that the next step reads
back: four passes and three temporaries of the whole block, where one pass would do.  So when
a result is big (MIN_ELEMENTS), arithmetic.binary does not compute an fp32/fp64 `+`, `-`, `*`
or `/`: it returns a tensor whose value is an `Expression` over the operands' arrays.  Arithmetic on
that tensor extends the expression; the first use of the values (a store, a reduction, any
operation that reads them) compiles the expression with numba into one ufunc and runs it.

The same bits: every step is the IEEE operation numpy would have done, in the same type and
order, on the arrays it would have read (numba compiles without fast-math, so nothing is
reordered or contracted into fused multiply-adds).  The leaves are held by the expression, so
nothing recycles or overwrites them before it runs (a load's view is of a snapshot: storage.py
copies before the first store into a block that was handed out).

One compilation per expression shape (its operations, which operands are shared, the type), per
process; an expression stops growing at MAX_NODES steps and is computed then.

A result of PARALLEL_ELEMENTS or more is computed by several threads, each on its own rows (numpy's
ufunc loops and the compiled loops run without the GIL): elementwise, so every element gets the
same bits whichever thread computes it.  A one-operand ufunc (exp, asin: far more work per element
than an add, and no compiled loop to prepare) is split from PARALLEL_UNARY elements, eager ones
(elementwise.py) too.  $MINITRITON_THREADS sets how many (1: one, the caller).
"""
from __future__ import annotations

import functools
import math
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
from numpy.lib.stride_tricks import as_strided

from .tensor import POOL, check_lockstep_bytes

MIN_ELEMENTS = 1 << 16   # results smaller than this are computed at once: compiling would cost more
MAX_NODES = 12           # steps in one expression (each leaf and operation counts)
PARALLEL_ELEMENTS = 1 << 20   # results this big are cut into one part per thread
PARALLEL_UNARY = 1 << 17      # the same for a one-operand ufunc
PART_ALIGN = 64          # elements: a part starts on a multiple of this (whole SIMD vectors in numpy's loops)
_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/"}
_NUMPY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide}
_COMPILED: dict = {}
_UNARY: dict = {}        # "ufunc:name" -> the ufunc of a deferred one-operand step (unary)
_enabled = True


def set_enabled(on: bool) -> bool:
    """Switch deferral (tests compare both ways); returns the previous setting."""
    global _enabled
    prev, _enabled = _enabled, bool(on)
    return prev


def enabled() -> bool:
    return _enabled


class Expression:
    """`op` of two operands, each an Expression or an array aligned to (rows, *block dims);
    `full` is the shape of the result's array."""

    __slots__ = ("op", "args", "dtype", "full", "nodes")

    def __init__(self, op, args, dtype, full):
        self.op, self.args, self.dtype, self.full = op, args, dtype, full
        self.nodes = 1 + sum(a.nodes if type(a) is Expression else 1 for a in args)

    @property
    def rows(self) -> int:
        return self.full[0]

    def evaluate(self, out=None) -> np.ndarray:
        """The values, in a new array or in `out` (of the full shape and type; rows of contiguous
        elements, which may be a stride apart: storage.Region)."""
        if out is None:
            check_lockstep_bytes(self.full[0] if self.full else 1, math.prod(self.full) * self.dtype.itemsize)
            out = POOL.empty(self.full, self.dtype)
        bounds = _parts(self.full, PARALLEL_UNARY if self.op in _UNARY else PARALLEL_ELEMENTS)
        if len(bounds) > 2:     # one part per thread, the first on this one
            pool, state = _threads(), np.geterr()
            jobs = [pool.submit(_as_caller, state, _rows(self, lo, hi).evaluate_here, out[lo:hi])
                    for lo, hi in zip(bounds[1:-1], bounds[2:])]
            _joined(jobs, _rows(self, 0, bounds[1]).evaluate_here, out[:bounds[1]])
            return out
        return self.evaluate_here(out)

    def evaluate_here(self, out) -> np.ndarray:
        """The values, in `out`, computed by this thread."""
        if self.op in _UNARY:
            return _UNARY[self.op](self.args[0], out=out)
        if self.nodes == 3:             # two arrays: numpy's own loop, no plan to make
            return _NUMPY[self.op](*self.args, out=out)
        leaves, lines, result = _plan(self)
        if len(lines) == 1:             # one step: numpy's own loop (it vectorises a little better)
            a, b = (leaves * 2)[:2] if len(leaves) == 1 else leaves
            return _NUMPY[self.op](a, b, out=out)
        leaves = [x if x.dtype == self.dtype else x.astype(self.dtype) for x in leaves]
        split = _split(leaves, self.full)
        if split is None:               # no two-level layout fits: numba's ufunc, which broadcasts anything
            fn = _compiled(self.dtype, tuple(lines), result, len(leaves))
            fn(*leaves, out=out)
            return out
        outer, inner, kinds, flat = split
        if outer and inner:
            rows = out.reshape(outer, inner)
            if rows.ctypes.data != out.ctypes.data:   # reshape copied: `out`'s rows do not merge
                rows = np.empty((outer, inner), out.dtype)
            _looped(self.dtype, tuple(lines), result, kinds)(*_flat(rows, writeable=True), outer, inner, *flat)
            if rows.base is None:
                out[...] = rows.reshape(out.shape)
        return out


_POOL_LOCK = threading.Lock()
_COMPILE_LOCK = threading.Lock()
_pool = None                 # (process id, ThreadPoolExecutor): a forked child makes its own


def threads() -> int:
    said = os.environ.get("MINITRITON_THREADS", "")
    if said:
        if not (said.isdigit() and int(said) > 0):
            raise ValueError(f"MINITRITON_THREADS must be a positive number of threads, got {said!r}")
        return int(said)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:      # not Linux
        return os.cpu_count() or 1


def _threads() -> ThreadPoolExecutor:
    global _pool
    with _POOL_LOCK:
        if _pool is None or _pool[0] != os.getpid():
            _pool = (os.getpid(), ThreadPoolExecutor(max_workers=max(1, threads() - 1),
                                                     thread_name_prefix="minitriton-expression"))
        return _pool[1]


BLAS_SPIN = 0.1        # seconds OpenBLAS's idle workers spin after a call (its THREAD_TIMEOUT, 2^28 cycles)
_blas_returned = -math.inf


def blas_returned():
    """A BLAS call (a dot's matmul) has just returned.  OpenBLAS's workers now spin on the other
    cores for BLAS_SPIN seconds, waiting for the next call, so for that long a part on a pool
    thread shares its core with a spinning worker and finishes late: a Flash Attention loop's
    exp2 between its two dots took 40 % longer on two threads than on one.  Until then, results
    are computed on this thread alone."""
    global _blas_returned
    _blas_returned = time.perf_counter()


def _parts(full, least=None) -> list:
    """Row bounds [0, ..., rows] of one part per thread ([0, rows]: one part) for a result of
    `least` elements or more (PARALLEL_ELEMENTS) while no BLAS worker spins (blas_returned).
    A part is at least `least` / 2 elements and starts on a multiple of PART_ALIGN elements."""
    least = PARALLEL_ELEMENTS if least is None else least
    rows = full[0] if full else 1
    if time.perf_counter() - _blas_returned < BLAS_SPIN:
        return [0, rows]
    size = math.prod(full)
    n = min(threads(), rows, size // (least // 2)) if size >= least else 1
    if n <= 1:
        return [0, rows]
    step = PART_ALIGN // math.gcd(PART_ALIGN, size // rows)      # rows in one aligned unit
    units = -(-rows // step)
    return sorted({min(rows, units * k // n * step) for k in range(n)} | {rows})


def _joined(jobs, fn, *args, **kw):
    """fn(*args, **kw) here while `jobs` run on the pool; returns once all are done (an error on
    any is raised, after every part has stopped writing)."""
    try:
        fn(*args, **kw)
    finally:
        for job in jobs:
            job.exception()
    for job in jobs:
        job.result()


def _as_caller(state, fn, *args, **kw):
    """fn run on a pool thread under the caller's floating-point error handling (numpy keeps it
    per thread: a launch's silenced overflow would warn from a worker)."""
    with np.errstate(**state):
        return fn(*args, **kw)


def ufunc(fn, v: np.ndarray) -> np.ndarray:
    """fn(v) for a numpy ufunc of one operand, by one thread per core on a big contiguous v
    (parts of whole SIMD vectors: the bits one thread gives)."""
    bounds = _parts((v.size // PART_ALIGN, PART_ALIGN), PARALLEL_UNARY) if v.size % PART_ALIGN == 0 else [0, 1]
    if len(bounds) <= 2 or not v.flags.c_contiguous:
        return fn(v)
    out = np.empty_like(v)
    src, dst = v.reshape(-1, PART_ALIGN), out.reshape(-1, PART_ALIGN)
    pool, state = _threads(), np.geterr()
    jobs = [pool.submit(_as_caller, state, fn, src[lo:hi], out=dst[lo:hi]) for lo, hi in zip(bounds[1:-1], bounds[2:])]
    _joined(jobs, fn, src[:bounds[1]], out=dst[:bounds[1]])
    return out


def _rows(x, lo, hi, cut=None):
    """Expression x on rows [lo, hi) of its result: each leaf that spans the rows, cut to them
    (a leaf shared by all rows, a column or a scalar, is kept whole; a leaf used twice stays one)."""
    cut = {} if cut is None else cut
    args = []
    for a in x.args:
        if type(a) is Expression:
            a = _rows(a, lo, hi, cut)
        elif isinstance(a, np.ndarray) and a.ndim == len(x.full) and a.shape[0] == x.full[0]:
            a = cut.setdefault(id(a), a[lo:hi])
        args.append(a)
    part = Expression(x.op, tuple(args), x.dtype, (hi - lo,) + x.full[1:])
    part.nodes = x.nodes
    return part


def unary(fn, a, dtype, full):
    """`fn(a)`, a numpy ufunc of one operand (libdevice's asin, say), deferred so that a store
    can compute it straight into its output.  One step, never extended: numpy's own loop gives
    the bits every other path gives, which a compiled chain of math functions would not."""
    e = Expression(f"ufunc:{fn.__name__}", (a,), np.dtype(dtype), tuple(full))
    e.nodes = MAX_NODES
    _UNARY[e.op] = fn
    return e


def combine(op, a, b, dtype, full):
    """The expression `a op b`, or None when it would be too long (the caller computes then)."""
    e = Expression(op, (a, b), np.dtype(dtype), tuple(full))
    return e if e.nodes <= MAX_NODES else None


def _plan(root):
    """The expression as straight-line code: leaves a0.., steps t0.. (an operand or array used
    twice is computed or passed once).  Returns (leaves, lines, name of the result)."""
    names, leaves, lines = {}, [], []
    return leaves, lines, _visit(root, names, leaves, lines)


def _visit(x, names, leaves, lines):
    # (a plain function, not a closure over itself: a closure would be a reference cycle that
    # keeps the leaves' arrays alive until the garbage collector runs)
    name = names.get(id(x))
    if name is not None:
        return name
    if type(x) is Expression:
        left = _visit(x.args[0], names, leaves, lines)
        right = _visit(x.args[1], names, leaves, lines)
        name = f"t{len(lines)}"
        lines.append(f"{name} = {left} {_SYMBOLS[x.op]} {right}")
    else:
        name = f"a{len(leaves)}"
        leaves.append(x)
    names[id(x)] = name
    return name


def _split(leaves, full):
    """The leaves as 2-d arrays over the result's dims cut into (outer, inner), every leaf
    spanning all or none of each part (x over (rows, N) beside mean over (rows, 1) and w over
    (1, N)): (outer size, inner size, each leaf's (spans outer, spans inner), the 2-d leaves),
    or None.

    Why: numba's ufunc runs a broadcast operand through numpy's general iterator, an element at a
    time (measured: 4-6x slower than a loop over (rows, N) indexing the operand by row).  A loop
    that knows which operands are per row, per column or whole compiles to what numpy's own
    contiguous loops do, and the arithmetic is the same IEEE steps in the same order."""
    layout = _layout(tuple(x.shape for x in leaves), full)
    if layout is None:
        return None
    outer, inner, kinds = layout
    flat = []
    for x, (o, i) in zip(leaves, kinds):
        x = x.reshape(outer if o else 1, inner if i else 1)
        item, (s0, s1) = x.itemsize, x.strides
        if not ((x.shape[1] == 1 or s1 == item) and (x.shape[0] == 1 or s0 >= 0 and s0 % item == 0)):
            x = np.ascontiguousarray(x)   # not rows of contiguous elements: the loop reads a copy
        flat += _flat(x)
    return outer, inner, kinds, flat


def _flat(x: np.ndarray, writeable=False):
    """A 2-d array of rows of contiguous elements as (one contiguous 1-d array whose rows are
    `step` apart, step): see _looped."""
    step = x.strides[0] // x.itemsize if x.shape[0] > 1 else 0
    if x.flags.c_contiguous:
        return x.reshape(-1), step
    return as_strided(x, shape=((x.shape[0] - 1) * step + x.shape[1],), strides=(x.itemsize,),
                      writeable=writeable), step


@functools.lru_cache(maxsize=1024)
def _layout(shapes, full):
    nd = len(full)
    for k in range(nd + 1):
        kinds = []
        for shape in shapes:
            if not shape:
                kinds.append((False, False))
                continue
            if len(shape) != nd:
                return None
            kind = []
            for dims in (range(k), range(k, nd)):
                wide = [d for d in dims if full[d] > 1]
                if all(shape[d] == full[d] for d in wide):
                    kind.append(bool(wide))
                elif all(shape[d] == 1 for d in wide):
                    kind.append(False)
                else:
                    break
            if len(kind) < 2:
                break
            kinds.append(tuple(kind))
        else:
            return math.prod(full[:k]), math.prod(full[k:]), tuple(kinds)
    return None


def _looped(dtype, lines, result, kinds):
    """The expression as a numba-compiled loop over (outer, inner), each leaf indexed by what it
    spans; compiled once per (type, steps, layout of the leaves)."""
    key = (dtype.str, lines, result, kinds)
    with _COMPILE_LOCK:         # threads computing parts of one expression share its compilation
        return _COMPILED.get(key) or _compile_looped(key, lines, result, kinds)


def _compile_looped(key, lines, result, kinds):
    # each leaf is one contiguous 1-d array with its rows s apart; a row is taken as a slice
    # and the inner loop indexes it by j alone: numba then knows the index is not negative
    # (no wrap-around test) and the step is one element, and the loop vectorises (2.5x
    # faster than indexing a 2-d leaf of any layout)
    per_row = "".join(f"        r{n} = x{n}[i * s{n}:i * s{n} + n]\n" if i else f"        a{n} = x{n}[i * s{n}]\n"
                      for n, (o, i) in enumerate(kinds))
    loaded = "".join(f"            a{n} = r{n}[j]\n" for n, (o, i) in enumerate(kinds) if i)
    steps = "".join(f"            {line}\n" for line in lines)
    params = ", ".join(f"x{n}, s{n}" for n in range(len(kinds)))
    namespace = {}
    exec(f"def expression(y, sy, m, n, {params}):\n"
         f"    for i in range(m):\n"
         f"        o = y[i * sy:i * sy + n]\n{per_row}"
         f"        for j in range(n):\n{loaded}{steps}"
         f"            o[j] = {result}\n", namespace)
    # error_model="numpy": x / 0 is inf (or nan), as numpy gives, not Python's ZeroDivisionError
    fn = _COMPILED[key] = numba.njit(nogil=True, error_model="numpy")(namespace["expression"])
    return fn


def _compiled(dtype, lines, result, n_leaves):
    key = (dtype.str, lines, result, n_leaves)
    with _COMPILE_LOCK:
        return _COMPILED.get(key) or _compile_ufunc(key, dtype, lines, result, n_leaves)


def _compile_ufunc(key, dtype, lines, result, n_leaves):
    args = ", ".join(f"a{i}" for i in range(n_leaves))
    body = "".join(f"    {line}\n" for line in lines)
    namespace = {}
    exec(f"def expression({args}):\n{body}    return {result}\n", namespace)
    kind = "float32" if dtype == np.float32 else "float64"
    fn = numba.vectorize([f"{kind}({', '.join([kind] * n_leaves)})"], nopython=True)(namespace["expression"])
    _COMPILED[key] = fn
    return fn
