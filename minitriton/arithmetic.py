"""Arithmetic of the block language: binary operators (after the fast paths of affine.py, which
keep index arithmetic symbolic) and logical operators.  Its operators are
attached to the tensor class here; the blocks a kernel makes are in creation.py."""
from __future__ import annotations

import math
import operator

import numpy as np

from . import context, expressions
from . import dtypes as D
from .expressions import Expression
from .affine import (COMPARE, affine_block_fast, affine_compare, affine_int_fast, affine_result, int_block_fast,
                     int_div, keep_affine, runs_of, scalar_int_fast)
from .dtypes import constexpr_value
from .tensor import (FROM_ABOVE, POOL, broadcast_shape, check_lockstep_bytes, check_lockstep_result, tensor, to_tensor,
                     round_to)
from .boxes import box_and, box_compare
from .errors import DeviceAssertionError


def rows_aligned(x: tensor, nd: int, dt=None) -> np.ndarray:
    """x's rows reshaped to rank 1+nd (leading block dims of size 1), in dt's container."""
    v = x.v
    if dt is not None and x.buf is None:
        v = v.astype(dt.container, copy=False)
    pad = nd - len(x.shape)
    return v.reshape((v.shape[0],) + (1,) * pad + x.shape) if pad else v


def elementwise_alu(t: tensor):
    """While tracing, count one elementwise FLOP per element of a float result."""
    st = context.LOCAL.__dict__.get("state")
    if st is not None and st.counts is not None and t.dtype.kind == "f":
        st.counts.alu += float(t.numel)
    return t


_NUMPY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply,
    "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
    "lshift": np.left_shift, "rshift": np.right_shift,
    "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
    "eq": np.equal, "ne": np.not_equal,
}


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


def _bool_fast(a, b, op):
    """`&`, `|`, `^` of two boolean blocks of one shape (conditions combined with `and`)."""
    if op not in ("and", "or", "xor") or type(a) is not tensor or type(b) is not tensor or a.shape != b.shape \
            or a.dtype is not D.int1 or b.dtype is not D.int1 or a.buf is not None or b.buf is not None:
        return None
    return tensor(_NUMPY[op](a.v, b.v), D.int1, a.shape)


# float results this large go into recycled arrays (tensor.POOL).  Measured on Triton's tutorials
# (interleaved runs): from 4 MB on, recycling beats fresh arrays (vector add 3.2x -> 1.5x numpy,
# its 4 MB blocks are kept until the launch ends); at 1 MB it made layer norm slower (1.5x -> 2.2x)
POOLED_BYTES = 4 << 20


def _pooled(ufunc, va, vb, dt, shape):
    """ufunc(va, vb), into a recycled array when the result is large: a launch that stores big
    blocks keeps them until it ends, and fresh arrays each time would fault their pages in anew.
    `shape`: the block's (va and vb are aligned to it, one row or one per program)."""
    rows = max(va.shape[0] if va.ndim else 1, vb.shape[0] if vb.ndim else 1)
    nbytes = rows * math.prod(shape) * va.itemsize
    if nbytes < POOLED_BYTES:
        return ufunc(va, vb)
    check_lockstep_bytes(rows, nbytes)
    if va.dtype != vb.dtype:
        return ufunc(va, vb)
    return ufunc(va, vb, out=POOL.empty((rows,) + tuple(shape), va.dtype))


_FLOAT_OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide}
_NUMBERS = (float, int)


def _operand(t: tensor, nd: int):
    """A float block as an operand of the fast path: its deferred expression when it has one of
    this rank (to be extended), else its values aligned to rank 1 + nd."""
    lazy = t.lazy
    if lazy is not None and t._v is None and type(lazy) is Expression and len(t.shape) == nd:
        return lazy
    return t.v if len(t.shape) == nd else rows_aligned(t, nd)


def _float_fast(a, b, op):
    """fp32/fp64 block arithmetic (`x - mean`, `acc += x * x`, `p * scale`, `num / den`): the hot path of
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


_SANITIZED = {"add", "sub", "mul"}


def _overflow_check(a, b, op):
    """Triton's debug-mode sanitizer: an integer add, sub or mul below 64 bits whose exact result
    leaves its type fails a device-side assert (in the programs running it)."""
    if any(isinstance(x, tensor) and x.buf is not None for x in (a, b)):
        return              # pointer arithmetic is not checked
    a, b, dt = operands(a, b)
    if dt.kind not in "iu" or dt.is_bool() or dt.bits >= 64:
        return
    shape = broadcast_shape(a.shape, b.shape)
    va, vb = rows_aligned(a, len(shape), D.int64), rows_aligned(b, len(shape), D.int64)
    exact = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op](va, vb)
    lo, hi = D.int_range(dt)
    bad = (exact < lo) | (exact > hi)
    active = context.current().active
    if active is not None:
        bad = bad & active.reshape((-1,) + (1,) * (bad.ndim - 1))
    if bad.any():
        row = int(np.argwhere(bad.reshape(bad.shape[0], -1).any(1))[0, 0])
        raise DeviceAssertionError(f"device-side assert triggered in program {context.current().pid_tuple(row)}: "
                                   f"int overflow detected for operation {op} ({dt}; debug mode sanitizes "
                                   f"integer add, sub and mul)")


def binary(a, b, op: str) -> tensor:
    if op in _SANITIZED and context.LOCAL.__dict__.get("debug") and (isinstance(a, tensor) or isinstance(b, tensor)):
        _overflow_check(a, b, op)
    fast = _float_fast(a, b, op)
    if fast is not None:
        return fast
    fast = scalar_int_fast(a, b, op)
    if fast is None:
        fast = affine_int_fast(a, b, op)
    if fast is None:
        fast = affine_block_fast(a, b, op)
    if fast is None and op == "and":
        fast = box_and(a, b)
    if fast is None:
        fast = _bool_fast(a, b, op)
    if fast is None:
        fast = int_block_fast(a, b, op)
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
    aff = keep_affine(a, b, op, shape) if dt.is_int() and not dt.is_bool() else None
    if aff is not None:
        return affine_result(dt, shape, aff)
    if dt.kind == "i" and op in ("add", "sub"):
        runs = runs_of(a, b, op, shape, dt)
        if runs is not None:
            return runs
    if op in COMPARE and dt.kind == "i":
        decided = affine_compare(a, b, op, shape)
        if decided is not None:
            return decided
        boxed = box_compare(a, b, op, shape, dt)
        if boxed is not None:
            return boxed
    nd = len(shape)
    va, vb = rows_aligned(a, nd, dt), rows_aligned(b, nd, dt)
    if op == "and" and dt.is_bool() and nd:
        kept = _and_all_true(va, vb, shape)
        if kept is not None:
            return tensor(kept, dt, shape)
    lanes = None
    if nd and _lane_constant(va) and _lane_constant(vb):
        # the same in every lane of a program (decided masks combined with &): compute once per program
        lanes = shape
        va, vb = va[(slice(None),) + (slice(0, 1),) * nd], vb[(slice(None),) + (slice(0, 1),) * nd]
    if lanes is None:
        check_lockstep_result(shape, 1 if op in COMPARE else np.dtype(dt.container).itemsize, va, vb)
    if op == "rshift" and signed_left and not dt.is_signed() and not dt.is_bool():
        # Triton shifts arithmetically when the left operand is signed, whatever the type it computes in
        sdt = np.dtype(f"i{dt.np.itemsize}")
        out = np.right_shift(va.view(sdt), vb.astype(sdt)).view(dt.np)
    elif op in _NUMPY and dt.kind == "f" and op not in COMPARE:
        out = _pooled(_NUMPY[op], va, vb, dt, shape if lanes is None else (1,) * nd)
    elif op in _NUMPY:  # floating-point warnings are silenced once per launch, in jit.py
        out = _NUMPY[op](va, vb)
    elif op == "truediv":
        out = np.true_divide(va, vb)
    elif op == "floordiv":
        out = int_div(va, vb)
    elif op == "mod":
        out = np.fmod(va, vb)
    else:
        raise NotImplementedError(op)
    if lanes is not None:
        out = np.broadcast_to(out, out.shape[:1] + tuple(lanes))
    if op in COMPARE:
        return tensor(out, D.int1, shape)
    result = tensor(round_to(out, dt) if dt.kind == "f" and dt.bits <= 16 else out.astype(dt.container, copy=False),
                    dt, shape)
    result.owned = result._v is out and out.nbytes >= POOLED_BYTES and out.flags.owndata   # back to POOL when dropped
    return elementwise_alu(result)


def _and_all_true(va, vb, shape):
    """`a & b` when the smaller side keeps every lane (a mask's `k < K` in every trip but the
    last): the other side, broadcast, not a new block of lanes; else None."""
    small, big = (va, vb) if va.size <= vb.size else (vb, va)
    if small.size > 4096 or not small.all():
        return None
    return np.broadcast_to(big, (max(va.shape[0], vb.shape[0]),) + tuple(shape))


def _lane_constant(v: np.ndarray) -> bool:
    return v.ndim > 1 and v.size > v.shape[0] and not any(v.strides[1:])


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


_CHAIN = {"Lt": operator.lt, "LtE": operator.le, "Gt": operator.gt, "GtE": operator.ge, "Eq": operator.eq,
          "NotEq": operator.ne, "Is": operator.is_, "IsNot": operator.is_not}


def compare_chain(ops, left, *rights):
    """`0 <= x < n` (Triton 3.9): each comparison once, joined as `and` joins them, elementwise
    for blocks; a middle operand is computed once, and for Python values a false comparison
    leaves the rest uncomputed, as in Python.  `rights` are functions giving the operands."""
    out = None
    for op, right in zip(ops, rights):
        right = right()
        r = _CHAIN[op](left, right)
        out = r if out is None else (logical_and(out, r) if isinstance(out, tensor) or isinstance(r, tensor) else r)
        if not isinstance(out, tensor) and not out:
            return out
        left = right
    return out


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
