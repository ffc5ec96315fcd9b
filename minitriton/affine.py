"""Integer index arithmetic kept symbolic.  An integer block built from `tl.arange` is affine: per
program, an offset plus one step per dimension (`pid * BLOCK + tl.arange(0, BLOCK)` is offsets
pid * BLOCK and step 1).  Kept so, a kernel's index and pointer arithmetic costs one number per
program instead of a block of lanes, bounds checks read two numbers per program, and a mask such
as `offs < n` is decided for whole programs.  The fast paths here take the hot cases of that
arithmetic (and of scalar loop bookkeeping, `tl.cdiv(N, BN)`, `tile // tiles_n`) before
arithmetic.binary's general path; each gives the general path's answer, with Triton's C integer
semantics (`//` and `%` truncate toward zero, results wrap around in their type).
"""
from __future__ import annotations

import builtins

import numpy as np

from . import context, fast_loops
from . import dtypes as D
from .tensor import broadcast_shape, tensor

_OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "lt": np.less, "le": np.less_equal,
        "gt": np.greater, "ge": np.greater_equal, "eq": np.equal, "ne": np.not_equal}


def aligned_steps(x: tensor, shape) -> tuple:
    pad = len(shape) - len(x.shape)
    steps = (0,) * pad + tuple(s if n > 1 else 0 for s, n in zip(x.aff[1], x.shape))
    return steps


def affine_bounds(x: tensor):
    """Per-row (min, max) of an affine integer tensor without materialising it."""
    c, steps = x.aff
    lo = c.copy()
    hi = c.copy()
    for s, n in zip(steps, x.shape):
        span = s * (n - 1)
        if span < 0:
            lo = lo + span
        else:
            hi = hi + span
    return lo, hi


def uniform_int(x):
    """The Python int of a uniform integer scalar, or None."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        return int(x)
    if isinstance(x, tensor) and x.buf is None and not x.shape and x.dtype.is_int() and x.rows == 1 and not x.dtype.is_bool():
        return int(x.aff[0][0]) if x.aff is not None else int(x.v.reshape(-1)[0])
    return None


# ---------------------------------------------------------------- binary operations
def int_div(a, b):
    """C's integer division (toward zero)."""
    q = np.floor_divide(a, b)
    if type(b) is int and b > 0 and type(a) is np.ndarray and a.min() >= 0:  # the usual case: nothing to fix
        return q
    fix = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
    return np.where(fix, q + 1, q) if fix.any() else q


COMPARE = {"lt", "le", "gt", "ge", "eq", "ne"}


def fits(dt, aff, shape):
    """Whether every lane of an affine value lies in dt's range (int64 wraps in numpy itself)."""
    if dt.bits >= 64:
        return True
    c, steps = aff
    lo, hi = D.int_range(dt)
    if c.shape[0] == 1:
        a = b = int(c[0])
    else:
        a, b = fast_loops.bounds(c)
    for s, n in zip(steps, shape):
        if s and n > 1:
            if s < 0:
                a += s * (n - 1)
            else:
                b += s * (n - 1)
    return lo <= a and b <= hi


def affine_result(dt, shape, aff, buf=None):
    """A tensor from an affine description; integers past dt's range wrap around, as in
    Triton (two's complement), which an affine description cannot express: such a value is
    computed lane by lane."""
    if buf is None and not fits(dt, aff, shape):
        t = tensor(None, D.int64, shape, aff=aff)
        return tensor(t.v.astype(dt.np), dt, shape)
    return tensor(None, dt, shape, aff=aff, buf=buf)


def uniform_index(x):
    """(int value, dtype or None for a Python int) of a uniform integer scalar, else None."""
    if type(x) is int:
        return x, None
    if type(x) is tensor and x.aff is not None and x.buf is None and not x.shape and x.dtype.kind == "i" \
            and x.aff[0].shape[0] == 1:
        return int(x.aff[0][0]), x.dtype
    return None


def affine_int_fast(a, b, op):
    """Index arithmetic with a uniform integer (`offs + 1`, `BLOCK * stride`, `ptr += step`):
    the hot path of every kernel loop, done without the general machinery."""
    if op not in ("add", "sub", "mul"):
        return None
    if type(a) is tensor and a.aff is not None:
        kb = uniform_index(b)
        t, k, flip = (a, kb, False) if kb is not None else (None, None, None)
    else:
        t = None
    if t is None and type(b) is tensor:
        ka = uniform_index(a)
        t, k, flip = (b, ka, True) if ka is not None else (None, None, None)
    if t is None or t.aff is None or (t.buf is None and t.dtype.kind != "i") \
            or (t.buf is not None and (flip and op == "sub" or op == "mul")):
        return None
    k, kdt = k
    if t.buf is not None:
        dt = t.dtype
    elif kdt is None:
        if not -2 ** 31 <= k < 2 ** 31:
            return None
        dt = t.dtype
    else:
        dt = D.promote(t.dtype, kdt)
    c, steps = t.aff
    if op == "add":
        aff = (c + k, steps)
    elif op == "mul":
        aff = (c * k, tuple(x * k for x in steps))
    elif flip:  # k - t
        aff = (k - c, tuple(-x for x in steps))
    else:
        aff = (c - k, steps)
    return affine_result(dt, t.shape, aff, t.buf)


def signed_affine(x):
    """x as (per-program offsets, steps) when it is a signed integer block kept affine, else None."""
    if type(x) is tensor and x.aff is not None and x.buf is None and x.dtype.kind == "i":
        return x.aff
    return None


def affine_block_fast(a, b, op):
    """Hot paths of loop bodies done without the general machinery: a pointer plus (or minus)
    an affine offset block, and an affine block compared with a scalar that is the same in every
    program (`offs < n`: decided here when every lane of every program agrees)."""
    if type(a) is not tensor or a.aff is None:
        return None
    if op in ("add", "sub") and a.buf is not None:
        ob = signed_affine(b)
        if ob is None:
            return None
        shape = broadcast_shape(a.shape, b.shape)
        sa, sb = aligned_steps(a, shape), aligned_steps(b, shape)
        sign = 1 if op == "add" else -1
        c = a.aff[0] + ob[0] if sign == 1 else a.aff[0] - ob[0]
        return tensor(None, a.dtype, shape, aff=(c, tuple(x + sign * y for x, y in zip(sa, sb))), buf=a.buf)
    if op in COMPARE and a.shape and a.aff[0].shape[0] == 1 and signed_affine(a) is not None:
        if type(b) is int:
            if not -2 ** 31 <= b < 2 ** 31:
                return None
            k = b
        else:
            ob = signed_affine(b)
            if ob is None or b.shape or ob[0].shape[0] != 1:
                return None
            k = int(ob[0][0])
        lo = hi = int(a.aff[0][0])
        for s, n in zip(a.aff[1], a.shape):
            if s < 0:
                lo += s * (n - 1)
            else:
                hi += s * (n - 1)
        if op in ("lt", "ge"):
            true, false = hi < k, lo >= k
        elif op in ("le", "gt"):
            true, false = hi <= k, lo > k
        else:
            true, false = lo == k == hi, k < lo or k > hi
        if not (true or false):
            return None
        value = true if op in ("lt", "le", "eq") else false
        shape = a.shape
        return tensor(np.broadcast_to(DECIDED[value], (1,) + tuple(shape)), D.int1, shape)
    return None


DECIDED = {True: np.ones((), bool), False: np.zeros((), bool)}


SCALAR_OPS = {"add", "sub", "mul", "floordiv", "mod", "lt", "le", "gt", "ge", "eq", "ne"}


def signed_scalar(x):
    """(per-program int64 values, dtype or None for a Python int) of a signed integer scalar."""
    if type(x) is int:
        return (x, None) if -2 ** 31 <= x < 2 ** 31 else None
    if type(x) is tensor and x.aff is not None and x.buf is None and not x.shape and x.dtype.kind == "i":
        return x.aff[0], x.dtype
    return None


def wrap(v: int, bits: int) -> int:
    half = 1 << (bits - 1)
    return (v + half) % (half << 1) - half


def c_div(x: int, y: int) -> int:
    """C's integer division of Python ints (toward zero)."""
    return builtins.abs(x) // builtins.abs(y) * (1 if (x < 0) == (y < 0) else -1)


def scalar_int_fast(a, b, op):
    """Scalar index arithmetic between signed integers (`tl.cdiv(N, BN)`, `tile // tiles_n`,
    `tile < first + count`): a loop's bookkeeping, done on the per-program values directly.
    Python ints when every program agrees, with Triton's C semantics (`//` and `%` truncate
    toward zero, results wrap around in their type)."""
    if op not in SCALAR_OPS:
        return None
    x, y = signed_scalar(a), signed_scalar(b)
    if x is None or y is None or (x[1] is None and y[1] is None):
        return None
    (xv, xd), (yv, yd) = x, y
    dt = yd if xd is None else xd if yd is None or yd is xd else D.promote(xd, yd)
    div = op in ("floordiv", "mod")
    if type(xv) is not int and xv.shape[0] == 1:
        xv = int(xv[0])
    if type(yv) is not int and yv.shape[0] == 1:
        yv = int(yv[0])
    if type(xv) is int and type(yv) is int:
        if op in COMPARE:
            r = {"lt": xv < yv, "le": xv <= yv, "gt": xv > yv, "ge": xv >= yv, "eq": xv == yv, "ne": xv != yv}[op]
            return tensor(np.broadcast_to(DECIDED[r], (1,)), D.int1, ())
        if div:
            if yv == 0:
                return None
            q = c_div(xv, yv)
            r = q if op == "floordiv" else xv - q * yv
        else:
            r = xv + yv if op == "add" else xv - yv if op == "sub" else xv * yv
        return tensor(None, dt, (), aff=(np.array([wrap(r, dt.bits)], np.int64), ()))
    if op in COMPARE:
        return tensor(_OPS[op](xv, yv), D.int1, ())
    if div and (yv == 0 if type(yv) is int else not np.all(yv)):
        return None
    if (xv.size if type(xv) is not int else yv.size) <= 16:  # a few programs: Python's ints beat numpy's calls
        xs = xv.tolist() if type(xv) is not int else None
        ys = yv.tolist() if type(yv) is not int else None
        n = len(xs if xs is not None else ys)
        pairs = zip(xs if xs is not None else [xv] * n, ys if ys is not None else [yv] * n)
        bits = dt.bits
        if op == "floordiv":
            r = [wrap(c_div(x, y), bits) for x, y in pairs]
        elif op == "mod":
            r = [wrap(x - c_div(x, y) * y, bits) for x, y in pairs]
        else:
            f = {"add": int.__add__, "sub": int.__sub__, "mul": int.__mul__}[op]
            r = [wrap(f(x, y), bits) for x, y in pairs]
        return tensor(None, dt, (), aff=(np.array(r, np.int64), ()))
    if op == "mod":     # |x % y| < |y|: always in range
        return tensor(None, dt, (), aff=(np.fmod(xv, yv), ()))
    if op == "floordiv":
        r = int_div(xv, yv)
        if type(yv) is int and yv != -1:    # |x // y| <= |x|: in range
            return tensor(None, dt, (), aff=(r, ()))
    else:
        r = _OPS[op](xv, yv)
    return affine_result(dt, (), (r, ()))


def int_block_fast(a, b, op):
    """Signed integer blocks kept affine added or subtracted (`pid * BM + tl.arange(0, BM)`)."""
    if op not in ("add", "sub"):
        return None
    x, y = signed_affine(a), signed_affine(b)
    if x is None or y is None:
        return None
    shape = broadcast_shape(a.shape, b.shape)
    dt = a.dtype if a.dtype is b.dtype else D.promote(a.dtype, b.dtype)
    sa, sb = aligned_steps(a, shape), aligned_steps(b, shape)
    if op == "add":
        aff = (x[0] + y[0], tuple(p + q for p, q in zip(sa, sb)))
    else:
        aff = (x[0] - y[0], tuple(p - q for p, q in zip(sa, sb)))
    return affine_result(dt, shape, aff)


def _steps_along(t: tensor, shape) -> list:
    """t's step along each axis of `shape` (t broadcast to it): a number where its lanes step
    evenly (affine, constant, or a run's axis), None where they vary otherwise."""
    if t.aff is not None:
        return list(aligned_steps(t, shape))
    pad = len(shape) - len(t.shape)
    steps = [0] * pad + [0 if n == 1 else None for n in t.shape]
    if t.runs is not None:
        _, axis, step = t.runs
        steps[pad + axis] = step
    return steps


def _at_zero(t: tensor, nd: int, axis: int) -> np.ndarray:
    """t's values (int64, rank 1 + nd, t broadcast to it) at index 0 of `axis`."""
    pad = nd - len(t.shape)
    v = t.runs[0] if t.runs is not None and t._v is None and t.runs[1] + pad == axis else t.v
    v = v.reshape((v.shape[0],) + (1,) * pad + v.shape[1:])
    if v.shape[axis + 1] > 1:
        v = v[(slice(None),) * (axis + 1) + (slice(0, 1),)]
    return v.astype(np.int64, copy=False)


_runs = True


def set_runs(on: bool) -> bool:
    """Switch runs_of (tests compare loads both ways); returns the previous setting."""
    global _runs
    prev, _runs = _runs, bool(on)
    return prev


def runs_of(a: tensor, b: tensor, op: str, shape, dt):
    """a op b (add or sub, in dt) as runs when it steps evenly along one axis in every program:
    value[..., j, ...] = starts + j * step, only `starts` computed (the value at j = 0).  An
    embedding's `idx[:, None] * D + cols[None, :]`, a matmul's wrapped rows `offs_am[:, None] *
    stride_am + offs_k[None, :]`: a load then reads run by run (memory.load) instead of lane by
    lane, and nothing builds the block of offsets.  None when no axis steps evenly, or a run
    would leave dt's range (where values wrap, runs do not hold)."""
    if not _runs or op not in ("add", "sub") or dt.kind != "i" or dt.bits < 32 or not shape \
            or a.dtype.kind != "i" or b.dtype.kind != "i":
        return None
    sa, sb = _steps_along(a, shape), _steps_along(b, shape)
    sign = 1 if op == "add" else -1
    for axis in range(len(shape) - 1, -1, -1):
        if shape[axis] > 1 and sa[axis] is not None and sb[axis] is not None and sa[axis] + sign * sb[axis] > 0:
            break
    else:
        return None
    step = sa[axis] + sign * sb[axis]
    za, zb = _at_zero(a, len(shape), axis), _at_zero(b, len(shape), axis)
    starts = za + zb if op == "add" else za - zb
    lo, hi = D.int_range(dt)
    if not starts.size or int(starts.min()) < lo or int(starts.max()) + (shape[axis] - 1) * step > hi:
        return None
    out = tensor(None, dt, shape)
    out.runs = (starts, axis, step)
    return out


FLIPPED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}


def affine_compare(a: tensor, b: tensor, op: str, shape):
    """An affine block compared with a scalar (`offs < n`) whose answer is the same for every
    lane of each program: that answer, as a broadcast view (no array of lanes is built)."""
    if b.shape and not a.shape:
        a, b, op = b, a, FLIPPED[op]
    if a.aff is None or b.aff is None or b.shape or not a.shape:
        return None
    lo, hi = affine_bounds(a)
    k = b.aff[0]
    if op in ("lt", "ge"):
        true, false = hi < k, lo >= k
    elif op in ("le", "gt"):
        true, false = hi <= k, lo > k
    else:
        true, false = (lo == k) & (hi == k), (k < lo) | (k > hi)
    if not running_rows(((true | false),))[0].all():  # undecided lanes of a program that runs
        return None
    rows = true if op in ("lt", "le", "eq") else false
    rows = rows.reshape((-1,) + (1,) * len(shape))
    return tensor(np.broadcast_to(rows, (rows.shape[0],) + tuple(shape)), D.int1, shape)


def running_rows(arrays):
    """Per-program arrays restricted to the programs running now (the others' results are never
    observed: control flow merges keep their old values)."""
    st = context.LOCAL.__dict__.get("state")
    active = st.active if st is not None else None
    if active is None or not active.any() or any(a.shape[0] != active.shape[0] for a in arrays):
        return arrays
    return tuple(a[active] for a in arrays)


def keep_affine(a: tensor, b: tensor, op: str, shape):
    """Keep the affine description through index arithmetic where it stays exact."""
    if a.aff is None or b.aff is None:
        return None
    if op in ("add", "sub"):
        sa, sb = aligned_steps(a, shape), aligned_steps(b, shape)
        sign = 1 if op == "add" else -1
        return (a.aff[0] + sign * b.aff[0], tuple(x + sign * y for x, y in zip(sa, sb)))
    if op == "mul":
        for x, y in ((a, b), (b, a)):
            k = uniform_int(y)
            if k is not None:
                return (x.aff[0] * k, tuple(s * k for s in aligned_steps(x, shape)))
            if not y.shape and not any(x.aff[1]):
                return (x.aff[0] * y.aff[0], (0,) * len(shape))
        return None
    if op == "mod":
        m = uniform_int(b)
        if m is not None and m > 0:
            lo, hi = running_rows(affine_bounds(a))
            if lo.min() >= 0 and hi.max() < m:  # x % m == x where it is observed
                return (a.aff[0], aligned_steps(a, shape))
        if not a.shape and not b.shape:
            return (np.fmod(a.aff[0], b.aff[0]), ())
        return None
    if op == "floordiv" and not a.shape and not b.shape:
        return (int_div(a.aff[0], b.aff[0]), ())
    return None
