"""Arithmetic, math, shape, reduction and dot operations of the block language."""
from __future__ import annotations

import builtins
import math

import numpy as np

from . import dtypes as D
from .tensor import FROM_ABOVE, tensor, to_tensor, constexpr, round_to, POOL
from . import context


def constexpr_value(x):
    return x.value if isinstance(x, constexpr) else x


# ---------------------------------------------------------------- broadcasting helpers
MAX_BLOCK_NUMEL = 1 << 20   # Triton's TRITON_MAX_TENSOR_NUMEL: no block holds more elements


def broadcast_shape(a, b):
    """numpy's broadcasting rule on shape tuples (a hot path: kept free of numpy calls)."""
    if a == b:
        return a
    if len(a) != len(b):
        n = builtins.max(len(a), len(b))
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


def rows_aligned(x: tensor, nd: int, dt=None) -> np.ndarray:
    """x's rows reshaped to rank 1+nd (leading block dims of size 1), in dt's container."""
    v = x.v
    if dt is not None and x.buf is None:
        v = v.astype(dt.container, copy=False)
    pad = nd - len(x.shape)
    return v.reshape((v.shape[0],) + (1,) * pad + x.shape) if pad else v


def _aligned_steps(x: tensor, shape) -> tuple:
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


def elementwise_alu(t: tensor):
    """While tracing, count one elementwise FLOP per element of a float result."""
    st = context._local.__dict__.get("state")
    if st is not None and st.counts is not None and t.dtype.kind == "f":
        st.counts.alu += float(t.numel)
    return t


# ---------------------------------------------------------------- binary operations
def _int_div(a, b):
    """C's integer division (toward zero)."""
    q = np.floor_divide(a, b)
    if type(b) is int and b > 0 and type(a) is np.ndarray and a.min() >= 0:  # the usual case: nothing to fix
        return q
    fix = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
    return np.where(fix, q + 1, q) if fix.any() else q


_NUMPY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply,
    "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
    "lshift": np.left_shift, "rshift": np.right_shift,
    "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
    "eq": np.equal, "ne": np.not_equal,
}
_COMPARE = {"lt", "le", "gt", "ge", "eq", "ne"}


def _fits(dt, aff, shape):
    """Whether every lane of an affine value lies in dt's range (int64 wraps in numpy itself)."""
    if dt.bits >= 64:
        return True
    c, steps = aff
    lo, hi = D.int_range(dt)
    if c.shape[0] == 1:
        a = b = int(c[0])
    else:
        a, b = int(c.min()), int(c.max())
    for s, n in zip(steps, shape):
        if s and n > 1:
            if s < 0:
                a += s * (n - 1)
            else:
                b += s * (n - 1)
    return lo <= a and b <= hi


def _affine_result(dt, shape, aff, buf=None):
    """A tensor from an affine description; integers past dt's range wrap around, as in
    Triton (two's complement), which an affine description cannot express: such a value is
    computed lane by lane."""
    if buf is None and not _fits(dt, aff, shape):
        t = tensor(None, D.int64, shape, aff=aff)
        return tensor(t.v.astype(dt.np), dt, shape)
    return tensor(None, dt, shape, aff=aff, buf=buf)


def _uniform_index(x):
    """(int value, dtype or None for a Python int) of a uniform integer scalar, else None."""
    if type(x) is int:
        return x, None
    if type(x) is tensor and x.aff is not None and x.buf is None and not x.shape and x.dtype.kind == "i" \
            and x.aff[0].shape[0] == 1:
        return int(x.aff[0][0]), x.dtype
    return None


def _affine_int_fast(a, b, op):
    """Index arithmetic with a uniform integer (`offs + 1`, `BLOCK * stride`, `ptr += step`):
    the hot path of every kernel loop, done without the general machinery."""
    if op not in ("add", "sub", "mul"):
        return None
    if type(a) is tensor and a.aff is not None:
        kb = _uniform_index(b)
        t, k, flip = (a, kb, False) if kb is not None else (None, None, None)
    else:
        t = None
    if t is None and type(b) is tensor:
        ka = _uniform_index(a)
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
    return _affine_result(dt, t.shape, aff, t.buf)


_DIV = ("truediv", "floordiv", "mod")
_BITWISE = ("and", "or", "xor", "lshift", "rshift")


def operands(a, b, div_or_mod=False):
    """Both operands as tensors, and the type to compute in (Triton's rules, see
    dtypes.computation_type: a Python number takes the type of the tensor it meets)."""
    a_num, b_num = not isinstance(a, tensor), not isinstance(b, tensor)
    if a_num and not b_num:
        b_t = b
        a_t = to_tensor(a, b)
    else:
        a_t = to_tensor(a)
        b_t = to_tensor(b, a_t if not a_num else None)
    return a_t, b_t, D.computation_type(a_t.dtype, b_t.dtype, a_num and not b_num, b_num and not a_num, div_or_mod)


def _signed_affine(x):
    """x as (per-program offsets, steps) when it is a signed integer block kept affine, else None."""
    if type(x) is tensor and x.aff is not None and x.buf is None and x.dtype.kind == "i":
        return x.aff
    return None


def _affine_block_fast(a, b, op):
    """Hot paths of loop bodies done without the general machinery: a pointer plus (or minus)
    an affine offset block, and an affine block compared with a scalar that is the same in every
    program (`offs < n`: decided here when every lane of every program agrees)."""
    if type(a) is not tensor or a.aff is None:
        return None
    if op in ("add", "sub") and a.buf is not None:
        ob = _signed_affine(b)
        if ob is None:
            return None
        shape = broadcast_shape(a.shape, b.shape)
        sa, sb = _aligned_steps(a, shape), _aligned_steps(b, shape)
        sign = 1 if op == "add" else -1
        c = a.aff[0] + ob[0] if sign == 1 else a.aff[0] - ob[0]
        return tensor(None, a.dtype, shape, aff=(c, tuple(x + sign * y for x, y in zip(sa, sb))), buf=a.buf)
    if op in _COMPARE and a.shape and a.aff[0].shape[0] == 1 and _signed_affine(a) is not None:
        if type(b) is int:
            if not -2 ** 31 <= b < 2 ** 31:
                return None
            k = b
        else:
            ob = _signed_affine(b)
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
        return tensor(np.broadcast_to(_DECIDED[value], (1,) + tuple(shape)), D.int1, shape)
    return None


_DECIDED = {True: np.ones((), bool), False: np.zeros((), bool)}
_SCALAR_OPS = {"add", "sub", "mul", "floordiv", "mod", "lt", "le", "gt", "ge", "eq", "ne"}


def _signed_scalar(x):
    """(per-program int64 values, dtype or None for a Python int) of a signed integer scalar."""
    if type(x) is int:
        return (x, None) if -2 ** 31 <= x < 2 ** 31 else None
    if type(x) is tensor and x.aff is not None and x.buf is None and not x.shape and x.dtype.kind == "i":
        return x.aff[0], x.dtype
    return None


def _wrap(v: int, bits: int) -> int:
    half = 1 << (bits - 1)
    return (v + half) % (half << 1) - half


def _c_div(x: int, y: int) -> int:
    """C's integer division of Python ints (toward zero)."""
    return builtins.abs(x) // builtins.abs(y) * (1 if (x < 0) == (y < 0) else -1)


def _scalar_int_fast(a, b, op):
    """Scalar index arithmetic between signed integers (`tl.cdiv(N, BN)`, `tile // tiles_n`,
    `tile < first + count`): a loop's bookkeeping, done on the per-program values directly.
    Python ints when every program agrees, with Triton's C semantics (`//` and `%` truncate
    toward zero, results wrap around in their type)."""
    if op not in _SCALAR_OPS:
        return None
    x, y = _signed_scalar(a), _signed_scalar(b)
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
        if op in _COMPARE:
            r = {"lt": xv < yv, "le": xv <= yv, "gt": xv > yv, "ge": xv >= yv, "eq": xv == yv, "ne": xv != yv}[op]
            return tensor(np.broadcast_to(_DECIDED[r], (1,)), D.int1, ())
        if div:
            if yv == 0:
                return None
            q = _c_div(xv, yv)
            r = q if op == "floordiv" else xv - q * yv
        else:
            r = xv + yv if op == "add" else xv - yv if op == "sub" else xv * yv
        return tensor(None, dt, (), aff=(np.array([_wrap(r, dt.bits)], np.int64), ()))
    if op in _COMPARE:
        return tensor(_NUMPY[op](xv, yv), D.int1, ())
    if div and (yv == 0 if type(yv) is int else not np.all(yv)):
        return None
    if (xv.size if type(xv) is not int else yv.size) <= 16:  # a few programs: Python's ints beat numpy's calls
        xs = xv.tolist() if type(xv) is not int else None
        ys = yv.tolist() if type(yv) is not int else None
        n = len(xs if xs is not None else ys)
        pairs = zip(xs if xs is not None else [xv] * n, ys if ys is not None else [yv] * n)
        bits = dt.bits
        if op == "floordiv":
            r = [_wrap(_c_div(x, y), bits) for x, y in pairs]
        elif op == "mod":
            r = [_wrap(x - _c_div(x, y) * y, bits) for x, y in pairs]
        else:
            f = {"add": int.__add__, "sub": int.__sub__, "mul": int.__mul__}[op]
            r = [_wrap(f(x, y), bits) for x, y in pairs]
        return tensor(None, dt, (), aff=(np.array(r, np.int64), ()))
    if op == "mod":     # |x % y| < |y|: always in range
        return tensor(None, dt, (), aff=(np.fmod(xv, yv), ()))
    if op == "floordiv":
        r = _int_div(xv, yv)
        if type(yv) is int and yv != -1:    # |x // y| <= |x|: in range
            return tensor(None, dt, (), aff=(r, ()))
    else:
        r = _NUMPY[op](xv, yv)
    return _affine_result(dt, (), (r, ()))


def _bool_fast(a, b, op):
    """`&`, `|`, `^` of two boolean blocks of one shape (conditions combined with `and`)."""
    if op not in ("and", "or", "xor") or type(a) is not tensor or type(b) is not tensor or a.shape != b.shape \
            or a.dtype is not D.int1 or b.dtype is not D.int1 or a.buf is not None or b.buf is not None:
        return None
    return tensor(_NUMPY[op](a.v, b.v), D.int1, a.shape)


def _int_block_fast(a, b, op):
    """Signed integer blocks kept affine added or subtracted (`pid * BM + tl.arange(0, BM)`)."""
    if op not in ("add", "sub"):
        return None
    x, y = _signed_affine(a), _signed_affine(b)
    if x is None or y is None:
        return None
    shape = broadcast_shape(a.shape, b.shape)
    dt = a.dtype if a.dtype is b.dtype else D.promote(a.dtype, b.dtype)
    sa, sb = _aligned_steps(a, shape), _aligned_steps(b, shape)
    if op == "add":
        aff = (x[0] + y[0], tuple(p + q for p, q in zip(sa, sb)))
    else:
        aff = (x[0] - y[0], tuple(p - q for p, q in zip(sa, sb)))
    return _affine_result(dt, shape, aff)


def binary(a, b, op: str) -> tensor:
    fast = _scalar_int_fast(a, b, op)
    if fast is None:
        fast = _affine_int_fast(a, b, op)
    if fast is None:
        fast = _affine_block_fast(a, b, op)
    if fast is None:
        fast = _bool_fast(a, b, op)
    if fast is None:
        fast = _int_block_fast(a, b, op)
    if fast is not None:
        return fast
    if op == "add" and (getattr(a, "lazy", None) is not None or getattr(b, "lazy", None) is not None):
        fused = FROM_ABOVE["fuse_accumulate"](a, b)
        if fused is not None:
            return fused
    if isinstance(a, tensor) and a.buf is not None or isinstance(b, tensor) and b.buf is not None:
        return FROM_ABOVE["pointer_binary"](a, b, op)
    signed_left = isinstance(a, tensor) and a.dtype.is_signed() or not isinstance(a, tensor) and constexpr_value(a) < 0
    a, b, dt = operands(a, b, op in _DIV)
    if op in _BITWISE and (not a.dtype.is_int() or not b.dtype.is_int()):
        raise TypeError(f"bitwise operator '{op}' needs integer operands, got {a.dtype} and {b.dtype}")
    if op == "truediv" and dt.is_int():
        dt = D.float32
    if op == "floordiv" and not dt.is_int():
        raise TypeError(f"'//' needs integer operands (as in Triton), got {a.dtype} and {b.dtype}")
    shape = broadcast_shape(a.shape, b.shape)
    aff = _affine(a, b, op, shape) if dt.is_int() and not dt.is_bool() else None
    if aff is not None:
        return _affine_result(dt, shape, aff)
    if op in _COMPARE and dt.kind == "i":
        decided = _affine_compare(a, b, op, shape)
        if decided is not None:
            return decided
    nd = len(shape)
    va, vb = rows_aligned(a, nd, dt), rows_aligned(b, nd, dt)
    lanes = None
    if nd and _lane_constant(va) and _lane_constant(vb):
        # the same in every lane of a program (decided masks combined with &): compute once per program
        lanes = shape
        va, vb = va[(slice(None),) + (slice(0, 1),) * nd], vb[(slice(None),) + (slice(0, 1),) * nd]
    if op == "rshift" and signed_left and not dt.is_signed() and not dt.is_bool():
        # Triton shifts arithmetically when the left operand is signed, whatever the type it computes in
        sdt = np.dtype(f"i{dt.np.itemsize}")
        out = np.right_shift(va.view(sdt), vb.astype(sdt)).view(dt.np)
    elif op in _NUMPY:  # floating-point warnings are silenced once per launch, in jit.py
        out = _NUMPY[op](va, vb)
    elif op == "truediv":
        out = np.true_divide(va, vb)
    elif op == "floordiv":
        out = _int_div(va, vb)
    elif op == "mod":
        out = np.fmod(va, vb)
    else:
        raise NotImplementedError(op)
    if lanes is not None:
        out = np.broadcast_to(out, out.shape[:1] + tuple(lanes))
    if op in _COMPARE:
        return tensor(out, D.int1, shape)
    return elementwise_alu(tensor(round_to(out, dt) if dt.kind == "f" and dt.bits <= 16 else out.astype(dt.container, copy=False),
                       dt, shape))


_FLIPPED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}


def _affine_compare(a: tensor, b: tensor, op: str, shape):
    """An affine block compared with a scalar (`offs < n`) whose answer is the same for every
    lane of each program: that answer, as a broadcast view (no array of lanes is built)."""
    if b.shape and not a.shape:
        a, b, op = b, a, _FLIPPED[op]
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
    if not _running_rows(((true | false),))[0].all():  # undecided lanes of a program that runs
        return None
    rows = true if op in ("lt", "le", "eq") else false
    rows = rows.reshape((-1,) + (1,) * len(shape))
    return tensor(np.broadcast_to(rows, (rows.shape[0],) + tuple(shape)), D.int1, shape)


def _running_rows(arrays):
    """Per-program arrays restricted to the programs running now (the others' results are never
    observed: control flow merges keep their old values)."""
    st = context._local.__dict__.get("state")
    active = st.active if st is not None else None
    if active is None or not active.any() or any(a.shape[0] != active.shape[0] for a in arrays):
        return arrays
    return tuple(a[active] for a in arrays)


def _lane_constant(v: np.ndarray) -> bool:
    return v.ndim > 1 and v.size > v.shape[0] and not any(v.strides[1:])


def _affine(a: tensor, b: tensor, op: str, shape):
    """Keep the affine description through index arithmetic where it stays exact."""
    if a.aff is None or b.aff is None:
        return None
    if op in ("add", "sub"):
        sa, sb = _aligned_steps(a, shape), _aligned_steps(b, shape)
        sign = 1 if op == "add" else -1
        return (a.aff[0] + sign * b.aff[0], tuple(x + sign * y for x, y in zip(sa, sb)))
    if op == "mul":
        for x, y in ((a, b), (b, a)):
            k = uniform_int(y)
            if k is not None:
                return (x.aff[0] * k, tuple(s * k for s in _aligned_steps(x, shape)))
            if not y.shape and not any(x.aff[1]):
                return (x.aff[0] * y.aff[0], (0,) * len(shape))
        return None
    if op == "mod":
        m = uniform_int(b)
        if m is not None and m > 0:
            lo, hi = _running_rows(affine_bounds(a))
            if lo.min() >= 0 and hi.max() < m:  # x % m == x where it is observed
                return (a.aff[0], _aligned_steps(a, shape))
        if not a.shape and not b.shape:
            return (np.fmod(a.aff[0], b.aff[0]), ())
        return None
    if op == "floordiv" and not a.shape and not b.shape:
        return (_int_div(a.aff[0], b.aff[0]), ())
    return None


def _as_bool(x):
    x = to_tensor(x)
    if x.buf is not None:
        raise TypeError("logical operators need scalars or blocks, got a pointer")
    return x if x.dtype.is_bool() else binary(x, 0, "ne")


def logical_and(x, y):
    """`x and y` between blocks: both as booleans, elementwise (Triton's semantics for `and`)."""
    return binary(_as_bool(x), _as_bool(y), "and")


def logical_or(x, y):
    return binary(_as_bool(x), _as_bool(y), "or")


def logical_not(x):
    return binary(_as_bool(x), True, "xor")


def _unary_minus(x):
    x = to_tensor(x)
    if x.aff is not None:
        return tensor(None, x.dtype, x.shape, aff=(-x.aff[0], tuple(-s for s in x.aff[1])))
    return tensor(-x.v, x.dtype, x.shape)


def _invert(x):
    if x.dtype.is_floating():
        raise TypeError("operator '~' needs an integer operand")
    return tensor(np.invert(x.v), x.dtype, x.shape)


def _install_operators():
    def make(op, reflected=False):
        if reflected:
            return lambda self, other: binary(other, self, op)
        return lambda self, other: binary(self, other, op)

    for op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "and", "or", "xor", "lshift", "rshift"):
        setattr(tensor, f"__{op}__", make(op))
        setattr(tensor, f"__r{op}__", make(op, True))
        setattr(tensor, f"__i{op}__", make(op))
    for op in ("lt", "le", "gt", "ge", "eq", "ne"):
        setattr(tensor, f"__{op}__", make(op))
    tensor.__neg__ = _unary_minus
    tensor.__pos__ = lambda self: self
    tensor.__invert__ = _invert
    tensor.logical_and = logical_and
    tensor.logical_or = logical_or
    tensor.__hash__ = object.__hash__
    tensor.to = lambda self, dtype, bitcast=False, **_: cast(self, dtype, bitcast=bitcast)
    tensor.__getitem__ = _getitem
    tensor.T = property(lambda self: trans(self))
    tensor.reshape = lambda self, *shape, **kw: reshape(
        self, shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape, **kw)



# ---------------------------------------------------------------- creation
def program_id(axis):
    return tensor(None, D.int32, (), aff=(context.current().program_ids(constexpr_value(axis)), ()))


def num_programs(axis):
    return to_tensor(context.current().grid[constexpr_value(axis)])


def arange(start, end):
    start, end = constexpr_value(start), constexpr_value(end)
    if not isinstance(start, (int, np.integer)) or not isinstance(end, (int, np.integer)):
        raise TypeError(f"tl.arange needs constexpr int bounds, got {start!r} and {end!r}")
    n = int(end) - int(start)
    if n <= 0 or n & (n - 1):
        raise ValueError(f"tl.arange's range must be a power of 2 (as in Triton), got arange({start}, {end}) of length {n}")
    if n > MAX_BLOCK_NUMEL:
        raise ValueError(f"tl.arange({start}, {end}) has {n:,} elements, more than Triton's limit of "
                         f"{MAX_BLOCK_NUMEL:,} per block (TRITON_MAX_TENSOR_NUMEL)")
    return tensor(None, D.int32, (n,), aff=(np.array([int(start)], np.int64), (1,)))


def _shape_arg(shape):
    shape = constexpr_value(shape)
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    shape = tuple(int(constexpr_value(s)) for s in shape)
    for s in shape:
        if s <= 0 or s & (s - 1):
            raise ValueError(f"block dimensions must be powers of 2, got shape {list(shape)}")
    if math.prod(shape) > MAX_BLOCK_NUMEL:
        raise ValueError(f"a block of shape {list(shape)} has {math.prod(shape):,} elements, more than Triton's limit "
                         f"of {MAX_BLOCK_NUMEL:,} (TRITON_MAX_TENSOR_NUMEL)")
    return shape


def full(shape, value, dtype):
    shape, dtype = _shape_arg(shape), constexpr_value(dtype)
    v = np.broadcast_to(np.asarray(value, dtype.container).reshape((1,) * (len(shape) + 1)), (1,) + shape)
    return tensor(v, dtype, shape)


def zeros(shape, dtype):
    return full(shape, 0, dtype)


def zeros_like(x):
    return zeros(x.shape, x.dtype)


def full_like(x, value):
    return full(x.shape, value, x.dtype)


def cdiv(x, div):
    return (x + div - 1) // div


# ---------------------------------------------------------------- casts
class Rounding:
    """fp32 values rounded to fp16/bf16 when first used.  A store into a half-precision
    argument takes the fp32 values and rounds them once, as it converts them for memory."""

    __slots__ = ("src", "dtype", "rows", "live")

    def __init__(self, src, dtype):
        self.src, self.dtype, self.rows = src, dtype, src.rows
        st = context._local.__dict__.get("state")
        live = st.active if st is not None else None
        # programs not running now never observe this value: only the others' rows are rounded
        self.live = live if live is not None and live.shape[0] == self.rows and live.sum() * 2 < self.rows else None

    def evaluate(self):
        v = self.src.v
        if self.live is None:
            return round_to(v, self.dtype)
        out = POOL.empty(v.shape, np.float32)  # the other rows are never observed
        out[self.live] = round_to(v[self.live], self.dtype)
        return out


def cast(x, dtype, bitcast=False, **_):
    x = to_tensor(x)
    dtype = constexpr_value(dtype)
    if x.buf is not None or isinstance(dtype, D.pointer_type):
        return FROM_ABOVE["cast_from_pointer" if x.buf is not None else "cast_to_pointer"](x, dtype)
    if x.dtype is dtype:
        return x
    if bitcast:
        if x.dtype.bits != dtype.bits:
            raise ValueError(f"bitcast needs equal bit widths, got {x.dtype} -> {dtype}")
        storage = x.v.astype(x.dtype.np) if x.dtype.container != x.dtype.np else x.v
        return tensor(np.ascontiguousarray(storage).view(dtype.np).astype(dtype.container, copy=False), dtype, x.shape)
    if dtype.bits == 16 and dtype.is_floating() and x.dtype is D.float32:
        return tensor.deferred(Rounding(x, dtype), dtype, x.shape)
    v = x.v
    if dtype.is_bool():
        out = v != 0
    elif dtype.is_floating():
        out = round_to(v.astype(np.float64 if dtype is D.float64 else np.float32, copy=False), dtype)
    else:
        with np.errstate(all="ignore"):
            src = np.trunc(v) if x.dtype.is_floating() else v
            out = src.astype(dtype.np)
    if x.aff is not None and dtype.is_int() and not dtype.is_bool():
        return tensor(None, dtype, x.shape, aff=x.aff)
    return tensor(out, dtype, x.shape)


# ---------------------------------------------------------------- elementwise math
def _float_unary(name, fn):
    def op(x, *args, **kw):
        x = to_tensor(x)
        if not x.dtype.is_floating():
            raise TypeError(f"tl.{name} needs a floating-point input, got {x.dtype}")
        with np.errstate(all="ignore"):
            out = fn(x.v.astype(x.dtype.container, copy=False))
        return elementwise_alu(tensor(round_to(out, x.dtype), x.dtype, x.shape))
    op.__name__ = name
    return op


exp = _float_unary("exp", np.exp)
exp2 = _float_unary("exp2", np.exp2)
log = _float_unary("log", np.log)
log2 = _float_unary("log2", np.log2)
sqrt = _float_unary("sqrt", np.sqrt)
rsqrt = _float_unary("rsqrt", lambda v: 1 / np.sqrt(v))
sin = _float_unary("sin", np.sin)
cos = _float_unary("cos", np.cos)
floor = _float_unary("floor", np.floor)
ceil = _float_unary("ceil", np.ceil)
sigmoid = _float_unary("sigmoid", lambda v: 1 / (1 + np.exp(-v)))
erf = _float_unary("erf", np.vectorize(math.erf, otypes=[np.float64]))


def abs(x):
    x = to_tensor(x)
    return tensor(np.abs(x.v), x.dtype, x.shape)


def _binary_fn(name, fn):
    def op(x, y, *args, **kw):
        x = to_tensor(x, y if isinstance(y, tensor) else None)
        y = to_tensor(y, x)
        dt = D.promote(x.dtype, y.dtype)
        shape = broadcast_shape(x.shape, y.shape)
        out = fn(rows_aligned(x, len(shape), dt), rows_aligned(y, len(shape), dt))
        return elementwise_alu(tensor(out.astype(dt.container, copy=False), dt, shape))
    op.__name__ = name
    return op


class PropagateNan:
    """How tl.maximum / tl.minimum treat NaN: NONE returns the other operand (the default, as
    IEEE maxNum does), ALL returns NaN."""
    NONE = 0
    ALL = 0xFFFF


_max_nan, _min_nan = _binary_fn("maximum", np.maximum), _binary_fn("minimum", np.minimum)
_max_num, _min_num = _binary_fn("maximum", np.fmax), _binary_fn("minimum", np.fmin)


def maximum(x, y, propagate_nan=PropagateNan.NONE):
    return (_max_nan if constexpr_value(propagate_nan) == PropagateNan.ALL else _max_num)(x, y)


def minimum(x, y, propagate_nan=PropagateNan.NONE):
    return (_min_nan if constexpr_value(propagate_nan) == PropagateNan.ALL else _min_num)(x, y)


_LOW32 = np.uint64(0xFFFFFFFF)


def mulhi_unsigned(a: np.ndarray, b: np.ndarray, bits: int) -> np.ndarray:
    """The high half of the 2N-bit product of two N-bit unsigned arrays."""
    if bits <= 32:
        wide = a.astype(np.uint64) * b.astype(np.uint64)
        return (wide >> np.uint64(bits)).astype(a.dtype)
    a, b = a.astype(np.uint64), b.astype(np.uint64)
    s32 = np.uint64(32)
    a_lo, a_hi, b_lo, b_hi = a & _LOW32, a >> s32, b & _LOW32, b >> s32
    hi_lo = a_hi * b_lo
    cross = ((a_lo * b_lo) >> s32) + (hi_lo & _LOW32) + a_lo * b_hi  # < 2**64: no carry lost
    return a_hi * b_hi + (hi_lo >> s32) + (cross >> s32)


def umulhi(x, y):
    """The high half of the 2N-bit product of two N-bit integers, read as unsigned (PTX's mul.hi.u)."""
    x, y, dt = operands(x, y)
    if not dt.is_int() or dt.is_bool() or dt.bits < 32:
        raise TypeError(f"tl.umulhi needs 32- or 64-bit integer operands, got {x.dtype} and {y.dtype}")
    shape = broadcast_shape(x.shape, y.shape)
    udt = np.dtype(f"u{dt.bits // 8}")
    a, b = (np.ascontiguousarray(rows_aligned(t, len(shape), dt)).view(udt) for t in (x, y))
    a, b = np.broadcast_arrays(a, b)
    return tensor(mulhi_unsigned(a, b, dt.bits).view(dt.container), dt, shape)


def fdiv(x, y, ieee_rounding=False):
    x, y = to_tensor(x), to_tensor(y)
    if not x.dtype.is_floating() or not y.dtype.is_floating():
        raise TypeError(f"tl.math.fdiv needs floating-point operands, got {x.dtype} and {y.dtype}")
    return x / y


def div_rn(x, y):
    """Division rounded to nearest even: numpy's IEEE division is exactly that."""
    return fdiv(x, y, ieee_rounding=True)


sqrt_rn = _float_unary("sqrt_rn", np.sqrt)  # numpy's sqrt is correctly rounded


def clamp(x, min, max, propagate_nan=PropagateNan.NONE):
    return minimum(maximum(x, min, propagate_nan), max, propagate_nan)


def fma(x, y, z):
    return x * y + z


def where(condition, x, y, *, every_program=False):
    """`every_program`: a control-flow merge, where programs not running now keep their own
    values (otherwise their values are never observed and do not constrain shortcuts)."""
    condition = to_tensor(condition)
    if isinstance(x, tensor) or not isinstance(y, tensor):
        x = to_tensor(x, y if isinstance(y, tensor) else None)
        y = to_tensor(y, x)
    else:
        y = to_tensor(y)
        x = to_tensor(x, y)
    if x.buf is not None or y.buf is not None:
        return FROM_ABOVE["pointer_where"](condition, x, y, every_program)
    decided = _decided(condition, every_program)
    if decided is not None:  # every lane of every program takes the same side (`tl.where(offs < M, offs, 0)`)
        keep = x if decided else y
        dt = D.promote(x.dtype, y.dtype)
        shape = broadcast_shape(broadcast_shape(condition.shape, x.shape), y.shape)
        if keep.dtype is dt:
            return broadcast_to(keep, shape)
    if not condition.shape and x.aff is not None and y.aff is not None and x.dtype is y.dtype \
            and x.shape == y.shape and _aligned_steps(x, x.shape) == _aligned_steps(y, y.shape):
        # one choice per program between two affine blocks (a divergent branch merging index or
        # pointer blocks): the result stays affine, never materialised
        c = np.where(condition.v.reshape(-1).astype(bool), x.aff[0], y.aff[0])
        return tensor(None, x.dtype, x.shape, aff=(c, _aligned_steps(x, x.shape)))
    dt = D.promote(x.dtype, y.dtype)
    shape = broadcast_shape(broadcast_shape(condition.shape, x.shape), y.shape)
    nd = len(shape)
    out = np.where(rows_aligned(condition, nd).astype(bool, copy=False), rows_aligned(x, nd, dt), rows_aligned(y, nd, dt))
    return tensor(out, dt, shape)


def _decided(condition: tensor, every_program=False):
    """True or False when a condition block is the same in every lane of every program (a
    broadcast view from an affine comparison, or a uniform scalar), else None."""
    if condition.aff is not None or condition.lazy is not None:
        return None
    v = condition.v
    if not v.size or any(v.strides[1:]):
        return None
    rows = v.reshape(v.shape[0], -1)[:, 0]
    if not every_program:
        rows, = _running_rows((rows,))
    if rows.shape[0] > 1 and not (rows == rows[0]).all():
        return None
    return bool(rows[0])


# ---------------------------------------------------------------- shapes
def _getitem(x: tensor, idx):
    if not isinstance(idx, tuple):
        idx = (idx,)
    if builtins.sum(i is Ellipsis for i in idx) > 1:
        raise IndexError("at most one ... in a block index")
    if Ellipsis in idx:
        k = idx.index(Ellipsis)
        fill = len(x.shape) - (len(idx) - 1 - builtins.sum(i is None for i in idx))
        idx = idx[:k] + (slice(None),) * fill + idx[k + 1:]
    shape, steps, d = [], [], 0
    for i in idx:
        if i is None:
            shape.append(1)
            steps.append(0)
        elif isinstance(i, slice) and i == slice(None):
            if d >= len(x.shape):
                raise IndexError(f"too many indices for a block of shape {list(x.shape)}")
            shape.append(x.shape[d])
            steps.append(x.aff[1][d] if x.aff is not None else 0)
            d += 1
        else:
            raise IndexError("blocks can only be indexed with None and ':' (e.g. x[:, None])")
    shape += x.shape[d:]
    if x.aff is not None:
        steps += list(x.aff[1][d:])
    return _with_shape(x, tuple(shape), tuple(steps))


def _with_shape(x: tensor, shape, steps=None):
    if x.aff is not None and steps is not None:
        return tensor(None, x.dtype, shape, aff=(x.aff[0], steps), buf=x.buf)
    v = x.v
    return tensor(v.reshape((v.shape[0],) + shape), x.dtype, shape, buf=x.buf)


def expand_dims(x, axis):
    axis = constexpr_value(axis)
    axes = sorted(a % (len(x.shape) + 1) for a in (axis if isinstance(axis, (tuple, list)) else [axis]))
    shape, steps = list(x.shape), list(x.aff[1]) if x.aff is not None else None
    for a in axes:
        shape.insert(a, 1)
        if steps is not None:
            steps.insert(a, 0)
    return _with_shape(x, tuple(shape), tuple(steps) if steps is not None else None)


def reshape(x, shape, can_reorder=False):
    shape = tuple(int(constexpr_value(s)) for s in (constexpr_value(shape) if isinstance(constexpr_value(shape), (tuple, list)) else [shape]))
    if math.prod(shape) != x.numel:
        raise ValueError(f"cannot reshape a block of shape {list(x.shape)} to {list(shape)}")
    return _with_shape(x, shape)


view = reshape


def broadcast_to(x, *shape):
    shape = tuple(int(constexpr_value(s)) for s in (shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape))
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
        return tensor(None, x.dtype, shape, aff=(x.aff[0], _aligned_steps(x, shape)), buf=x.buf)
    v = rows_aligned(x, len(shape))
    return tensor(np.broadcast_to(v, (v.shape[0],) + shape), x.dtype, shape, buf=x.buf)


def ravel(x, can_reorder=False):
    return reshape(x, (x.numel,))


def swizzle2d(i, j, size_i, size_j, size_g):
    """Renumber a size_i x size_j grid so that consecutive ids walk groups of size_g rows
    column by column (the L2-friendly order of Triton's matmul tutorial)."""
    linear = i * size_j + j
    per_group = size_g * size_j
    first_row = (linear // per_group) * size_g
    rows_here = minimum(size_i - first_row, size_g)
    within = linear % per_group
    return first_row + within % rows_here, within // rows_here


def broadcast(x, y):
    shape = broadcast_shape(to_tensor(x).shape, to_tensor(y).shape)
    return broadcast_to(x, shape), broadcast_to(y, shape)


def permute(x, *dims):
    dims = tuple(int(constexpr_value(d)) for d in (dims[0] if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims))
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


# ---------------------------------------------------------------- reductions
def _reduce_axis(x: tensor, axis, keep_dims):
    if axis is None:
        v = x.v.reshape(x.v.shape[0], -1)
        return v, 1, (() if not keep_dims else (1,) * len(x.shape))
    axis = int(constexpr_value(axis))
    if not -len(x.shape) <= axis < len(x.shape):
        raise ValueError(f"reduction axis {axis} out of range for a block of shape {list(x.shape)}")
    axis %= len(x.shape)
    shape = list(x.shape)
    if keep_dims:
        shape[axis] = 1
    else:
        del shape[axis]
    return x.v, axis + 1, tuple(shape)


def _reduce(x, axis, keep_dims, fn, dt):
    """Reduce with fn(values, axis); values are in x's container dtype, the result is dt."""
    x = to_tensor(x)
    elementwise_alu(x)
    v, ax, shape = _reduce_axis(x, axis, keep_dims)
    out = fn(v, ax).astype(dt.container, copy=False)
    return tensor(out.reshape((out.shape[0],) + shape), dt, shape)


def _acc_dtype(dt):
    if dt.is_int() and dt.bits < 32:  # as Triton: the same signedness (int1 counts as unsigned)
        return D.int32 if dt.is_signed() else D.uint32
    return D.float32 if dt is D.bfloat16 else dt


def sum(input, axis=None, keep_dims=False, dtype=None):
    x = to_tensor(input)
    dt = constexpr_value(dtype) or _acc_dtype(x.dtype)
    if dt is D.int1:  # one-bit addition: parity, as Triton computes it
        r = _reduce(x, axis, keep_dims, lambda v, a: np.bitwise_and(np.sum(v != 0, axis=a), 1) != 0, dt)
    else:
        r = _reduce(x, axis, keep_dims, lambda v, a: np.sum(v.astype(dt.container, copy=False), axis=a,
                                                           dtype=dt.container), dt)
    return tensor(round_to(r.v, dt), dt, r.shape) if dt.is_floating() and dt.bits <= 16 else r


def _extreme_dtype(dt, return_indices):
    """Triton reduces bf16 in fp32, and (without indices) every narrower type in fp32 / int32."""
    if dt is D.bfloat16 or (not return_indices and dt.kind == "f" and dt.bits < 32):
        return D.float32
    if not return_indices and dt.is_int() and dt.bits < 32:
        return D.int32
    return dt


def max(input, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False):
    x = to_tensor(input)
    dt = _extreme_dtype(x.dtype, return_indices)
    r = _reduce(x, axis, keep_dims, lambda v, a: np.fmax.reduce(v, axis=a), dt)  # NaN only if all are
    return (r, argmax(x, axis, return_indices_tie_break_left, keep_dims=keep_dims)) if return_indices else r


def min(input, axis=None, return_indices=False, return_indices_tie_break_left=True, keep_dims=False):
    x = to_tensor(input)
    dt = _extreme_dtype(x.dtype, return_indices)
    r = _reduce(x, axis, keep_dims, lambda v, a: np.fmin.reduce(v, axis=a), dt)
    return (r, argmin(x, axis, return_indices_tie_break_left, keep_dims=keep_dims)) if return_indices else r


def _arg_extreme(v, a, largest, tie_break_left):
    """The index of the value max/min return: NaNs are passed over unless all are NaN, as
    fmax/fmin pass them over, so a value and its index always belong together; ties go to the
    first index (or the last, without tie_break_left)."""
    if v.dtype.kind == "f":
        nan = np.isnan(v)
        if nan.any():
            v = np.where(nan, -np.inf if largest else np.inf, v)
    pick = np.argmax if largest else np.argmin
    if tie_break_left:
        return pick(v, axis=a).astype(np.int32)
    n = v.shape[a]
    return (n - 1 - pick(np.flip(v, a), axis=a)).astype(np.int32)


def argmax(input, axis, tie_break_left=True, keep_dims=False):
    return _reduce(input, axis, keep_dims, lambda v, a: _arg_extreme(v, a, True, constexpr_value(tie_break_left)), D.int32)


def argmin(input, axis, tie_break_left=True, keep_dims=False):
    return _reduce(input, axis, keep_dims, lambda v, a: _arg_extreme(v, a, False, constexpr_value(tie_break_left)), D.int32)


def xor_sum(input, axis=None, keep_dims=False):
    x = to_tensor(input)
    return _reduce(x, axis, keep_dims, lambda v, a: np.bitwise_xor.reduce(v, axis=a), x.dtype)


def cumsum(input, axis=0, reverse=False, dtype=None):
    x = to_tensor(input)
    dt = constexpr_value(dtype) or _acc_dtype(x.dtype)
    ax = int(constexpr_value(axis)) % len(x.shape) + 1
    v = x.v.astype(dt.container)
    if reverse:
        v = np.flip(v, ax)
    out = np.cumsum(v, axis=ax, dtype=dt.container)
    if reverse:
        out = np.flip(out, ax)
    return tensor(round_to(out, dt), dt, x.shape)


def softmax(x, ieee_rounding=False):
    z = x - max(x, 0, keep_dims=True)
    num = exp(z)
    return num / sum(num, 0, keep_dims=True)


# ---------------------------------------------------------------- hints and no-ops
def multiple_of(input, values):
    return input


def max_contiguous(input, values):
    return input


def max_constancy(input, values):
    return input


def assume(cond):
    return None


def debug_barrier():
    return None


def static_assert(cond, msg=""):
    if not cond:
        raise AssertionError(f"static_assert failed: {msg}")


def static_print(*values, **kw):
    print(*values)


def _format(v, hex_):
    v = np.asarray(v)
    if hex_ and v.dtype.kind in "iub":
        width = v.dtype.itemsize * 2
        bits = v.astype(v.dtype.str.replace("i", "u").replace("b1", "u1"), copy=False)
        return np.array2string(bits, formatter={"int": lambda x: f"0x{int(x):0{width}x}"}, max_line_width=10 ** 6)
    return np.array2string(v, max_line_width=10 ** 6, threshold=10 ** 6) if v.ndim else str(v)


def device_print(prefix, *args, hex=False):
    """Print, for each active program, its pid, the prefix and the values (in hex for integers
    with hex=True)."""
    prefix = constexpr_value(prefix)
    if not isinstance(prefix, str):
        raise TypeError(f"tl.device_print: the prefix must be a string, got {prefix!r}")
    ctx = context.current()
    active = ctx.active
    for p in builtins.range(ctx.rows):
        if active is not None and not active[p]:
            continue
        vals = [_format(a.v[builtins.min(p, a.rows - 1)], hex) if isinstance(a, tensor) else str(constexpr_value(a)) for a in args]
        print(f"pid {ctx.pid_tuple(p)} {prefix}", *vals)


def kernel_print(*args, **kwargs):
    """Python's print inside a kernel: device_print, as in Triton (values printed per program)."""
    if any(isinstance(a, tensor) for a in args):
        prefix, rest = (args[0], args[1:]) if args and isinstance(constexpr_value(args[0]), str) else ("", args)
        return device_print(prefix, *rest)
    return print(*args, **kwargs)


def device_assert(cond, msg="", mask=None):
    cond = to_tensor(cond)
    bad = ~cond.v.astype(bool)
    if mask is not None:
        bad &= to_tensor(mask).v.astype(bool)
    if bad.any():
        row = int(np.argwhere(bad.reshape(bad.shape[0], -1).any(1))[0, 0])
        raise AssertionError(f"device_assert failed in program {context.current().pid_tuple(row)}: {msg}")


class Range:
    """`tl.range`/`tl.static_range` (and Python's `range` inside kernels): Triton's keyword
    arguments are accepted.  Bounds may differ between programs: a lowered `for` then gives
    each program its own trip count (control.Loop)."""

    def __init__(self, arg1, arg2=None, step=None, num_stages=None, loop_unroll_factor=None,
                 disallow_acc_multi_buffer=False, flatten=False, warp_specialize=False, **_):
        start, end = (0, arg1) if arg2 is None else (arg1, arg2)
        self.args = (constexpr_value(start), constexpr_value(end), 1 if step is None else constexpr_value(step))
        if any(isinstance(a, tensor) and (a.shape or not a.dtype.is_int()) for a in self.args) or \
                any(not isinstance(a, (tensor, int, np.integer)) for a in self.args):
            raise TypeError(f"range bounds must be integer scalars, got {self.args}")

    @property
    def _r(self):
        return builtins.range(*(int(a) for a in self.args))

    def per_program(self, st):
        """(start, step, trips) arrays when the bounds differ between the active programs, else None."""
        vals = [a.v.reshape(-1).astype(np.int64) if isinstance(a, tensor) else np.array([int(a)], np.int64)
                for a in self.args]
        if all(v.size == 1 for v in vals):
            return None
        start, end, step = (np.broadcast_to(v, (st.rows,)) for v in vals)
        act = st.active
        sel = slice(None) if act is None else act
        if all((v[sel] == v[sel][:1]).all() for v in (start, end, step) if v[sel].size):
            return None
        if (step[sel] == 0).any():
            raise ValueError("range step must not be zero")
        trips = np.maximum(0, np.where(step > 0, (end - start + step - 1) // np.where(step > 0, step, 1),
                                       (start - end - step - 1) // np.where(step < 0, -step, 1)))
        if act is not None:
            trips = np.where(act, trips, 0)
        dt = D.int32
        for a in self.args:
            if isinstance(a, tensor):
                dt = D.promote(dt, a.dtype)
        return _RangeValues(start, step, dt), None, trips

    def __iter__(self):
        r = self._r
        st = context._local.__dict__.get("state")
        if st is not None and st.counts is not None:
            st.counts.trips += len(r)
        return iter(r)

    def __len__(self):
        return len(self._r)


class _RangeValues:
    """Trip t's loop variable for every program: start + step * t."""

    def __init__(self, start, step, dtype):
        self.start, self.step, self.dtype = start, step, dtype

    def __call__(self, t):
        return tensor(None, self.dtype, (), aff=(self.start + self.step * t, ()))


range = Range
static_range = Range


_install_operators()   # (last: it attaches functions defined above)
