"""Arithmetic of the block language: broadcasting, binary operators (with the fast paths that
keep index arithmetic symbolic, affine in `arange`) and logical operators.  Its operators are
attached to the tensor class here; the blocks a kernel makes are in creation.py."""
from __future__ import annotations

import builtins
import math

import numpy as np

from . import context, expressions
from . import dtypes as D
from .expressions import Expression
from .tensor import FROM_ABOVE, POOL, tensor, to_tensor, constexpr, round_to


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


def elementwise_alu(t: tensor):
    """While tracing, count one elementwise FLOP per element of a float result."""
    st = context.LOCAL.__dict__.get("state")
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
        sa, sb = aligned_steps(a, shape), aligned_steps(b, shape)
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
    sa, sb = aligned_steps(a, shape), aligned_steps(b, shape)
    if op == "add":
        aff = (x[0] + y[0], tuple(p + q for p, q in zip(sa, sb)))
    else:
        aff = (x[0] - y[0], tuple(p - q for p, q in zip(sa, sb)))
    return _affine_result(dt, shape, aff)


# float results this large go into recycled arrays (tensor.POOL).  Measured on Triton's tutorials
# (interleaved runs): from 4 MB on, recycling beats fresh arrays (vector add 3.2x -> 1.5x numpy,
# its 4 MB blocks are kept until the launch ends); at 1 MB it made layer norm slower (1.5x -> 2.2x)
POOLED_BYTES = 4 << 20


def _pooled(ufunc, va, vb, dt, shape):
    """ufunc(va, vb), into a recycled array when the result is large: a launch that stores big
    blocks keeps them until it ends, and fresh arrays each time would fault their pages in anew.
    `shape`: the block's (va and vb are aligned to it, one row or one per program)."""
    rows = max(va.shape[0] if va.ndim else 1, vb.shape[0] if vb.ndim else 1)
    if rows * math.prod(shape) * va.itemsize < POOLED_BYTES or va.dtype != vb.dtype:
        return ufunc(va, vb)
    return ufunc(va, vb, out=POOL.empty((rows,) + tuple(shape), va.dtype))


_FLOAT_OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply}
_NUMBERS = (float, int)


def _operand(t: tensor, nd: int):
    """A float block as an operand of the fast path: its deferred expression when it has one of
    this rank (to be extended), else its values aligned to rank 1 + nd."""
    lazy = t.lazy
    if lazy is not None and t._v is None and type(lazy) is Expression and len(t.shape) == nd:
        return lazy
    return t.v if len(t.shape) == nd else rows_aligned(t, nd)


def _float_fast(a, b, op):
    """fp32/fp64 block arithmetic (`x - mean`, `acc += x * x`, `p * scale`): the hot path of
    normalisation and attention kernels, computed in the operands' own type with none of the
    general path's questions (no rounding to a narrower type, no integer rules, no pointers);
    the same answer as the general path, which takes every other case.  Big results are
    deferred (expressions.py): the steps run later as one pass."""
    ufunc = _FLOAT_OPS.get(op)
    if ufunc is None:
        return None
    if type(a) is tensor:
        t, other, flip = a, b, False
    elif type(b) is tensor:
        t, other, flip = b, a, True
    else:
        return None
    dt = t.dtype
    if (dt is not D.float32 and dt is not D.float64) or t.buf is not None:
        return None
    if type(other) is tensor:
        if other.dtype is not dt or other.buf is not None or \
                op == "add" and (_dot_lazy(t) or _dot_lazy(other)):
            return None                 # a dot's accumulator: fused below
        ta, tb = a, b
        sa, sb = a.shape, b.shape
        shape = sa if sa is sb or tuple.__eq__(sa, sb) else broadcast_shape(sa, sb)
        nd = len(shape)
        va, vb = _operand(a, nd), _operand(b, nd)
        if nd and type(va) is not Expression and type(vb) is not Expression and _lane_constant(va) \
                and _lane_constant(vb):
            return None                 # the general path computes it once per program
    else:
        # a Python number takes the block's type (dtypes.number_takes); ints past 64 bits are refused there
        if not (type(other) is float or type(other) is int and -2 ** 63 <= other < 2 ** 64) or \
                op == "add" and _dot_lazy(t):
            return None
        shape = t.shape
        nd = len(shape)
        vt = _operand(t, nd)
        if shape and type(vt) is not Expression and _lane_constant(vt):
            return None
        vo = np.asarray(other, dt.container)
        va, vb = (vo, vt) if flip else (vt, vo)
        ta, tb = (None, t) if flip else (t, None)
    rows = max(_rows_of(va), _rows_of(vb))
    deferred = None
    if rows * math.prod(shape) >= expressions.MIN_ELEMENTS and expressions.enabled() and not _tracing():
        deferred = expressions.combine(op, va, vb, dt.container, (rows,) + tuple(shape))
    if deferred is not None:
        return elementwise_alu(tensor.deferred(deferred, dt, shape))
    if type(va) is Expression:          # too long to extend: the operand is computed now
        va = ta.v
    if type(vb) is Expression:
        vb = tb.v
    out = _pooled(ufunc, va, vb, dt, shape)
    result = tensor(out, dt, shape)
    result.owned = out.nbytes >= POOLED_BYTES and out.flags.owndata
    return elementwise_alu(result)


def _dot_lazy(t: tensor) -> bool:
    """Whether t's value is deferred by something other than an Expression (a dot's chain)."""
    return t.lazy is not None and type(t.lazy) is not Expression


def _rows_of(v):
    return 1 if type(v) is not Expression and v.ndim == 0 else v.shape[0] if type(v) is not Expression else v.rows


def _tracing() -> bool:
    st = context.LOCAL.__dict__.get("state")
    return st is not None and st.counts is not None


def binary(a, b, op: str) -> tensor:
    fast = _float_fast(a, b, op)
    if fast is not None:
        return fast
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
        raise TypeError(f"invalid operands of type {a.dtype} and {b.dtype}: bitwise operator '{op}' needs "
                        f"integer operands (as in Triton)")
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
    elif op in _NUMPY and dt.kind == "f" and op not in _COMPARE:
        out = _pooled(_NUMPY[op], va, vb, dt, shape if lanes is None else (1,) * nd)
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
    result = tensor(round_to(out, dt) if dt.kind == "f" and dt.bits <= 16 else out.astype(dt.container, copy=False),
                    dt, shape)
    result.owned = result._v is out and out.nbytes >= POOLED_BYTES and out.flags.owndata   # back to POOL when dropped
    return elementwise_alu(result)


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


def _lane_constant(v: np.ndarray) -> bool:
    return v.ndim > 1 and v.size > v.shape[0] and not any(v.strides[1:])


def _affine(a: tensor, b: tensor, op: str, shape):
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
        return (_int_div(a.aff[0], b.aff[0]), ())
    return None


def _as_bool(x):
    x = to_tensor(x)
    if x.buf is not None:
        raise TypeError("logical operators need scalars or blocks, got a pointer")
    return x if x.dtype.is_bool() else binary(x, 0, "ne")


def _as_function(x, y, op):
    """`x <op> y` called as a function (two Python numbers make a tensor first, as in Triton)."""
    if not isinstance(x, tensor) and not isinstance(y, tensor):
        x = to_tensor(x)
    return binary(x, y, op)


def add(x, y, sanitize_overflow=True):
    """Triton's `tl.add`: `x + y` (`sanitize_overflow` adds overflow checks to Triton's debug
    builds only; minitriton's integers wrap as a GPU's do either way)."""
    return _as_function(x, y, "add")


def sub(x, y, sanitize_overflow=True):
    return _as_function(x, y, "sub")


def mul(x, y, sanitize_overflow=True):
    return _as_function(x, y, "mul")


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


_install_operators()   # (last: it attaches functions defined above)
