"""CUDA libdevice's integer intrinsics, as Triton exposes them (`libdevice.clz`, `popc`, `mulhi`,
...): bit counts and reversals, high halves of products, 24-bit products, absolute differences,
halving adds and byte permutes.  Each takes the element types Triton's dispatch table lists for
it and returns the type that table names; any other type is refused by name, as in Triton.
"""
from __future__ import annotations

import numpy as np

from . import dtypes as D
from .tensor import broadcast_shape, tensor, to_tensor
from .arithmetic import rows_aligned


def operand_arrays(name, xs, allowed):
    """The operands of libdevice.`name` as arrays of one type among `allowed`, broadcast to their
    common block (Python numbers take the blocks' type): (arrays, that type, the block's shape).
    Any other mix is refused by name, as Triton's dispatch table refuses it."""
    ts = [x if isinstance(x, tensor) else None for x in xs]
    dt = next((t.dtype for t in ts if t is not None), allowed[0])
    ts = [t if t is not None else to_tensor(x, tensor(None, dt, ())) for t, x in zip(ts, xs)]
    if any(t.dtype is not dt for t in ts) or dt not in allowed:
        raise TypeError(f"libdevice.{name} takes {' or '.join(str(d) for d in allowed)} blocks of one type "
                        f"(as in Triton), got {', '.join(str(t.dtype) for t in ts)}")
    shape = ts[0].shape
    for t in ts[1:]:
        shape = broadcast_shape(shape, t.shape)
    return np.broadcast_arrays(*(rows_aligned(t, len(shape), dt) for t in ts)), dt, shape


def _unsigned(v):
    return v.view(np.dtype(f"u{v.dtype.itemsize}"))


def _highest_bit(u, bits):
    """Index of each value's highest set bit (uint64 values, nonzero where it matters): a binary
    search over shifts, exact for every width (a float log2 rounds above 2**53)."""
    x, index = u.copy(), np.zeros(u.shape, np.int32)
    for s in (32, 16, 8, 4, 2, 1):
        if s >= bits:
            continue
        high = x >> np.uint64(s)
        move = high != 0
        index += np.where(move, s, 0).astype(np.int32)
        x = np.where(move, high, x)
    return index


def clz(x):
    """Leading zero bits (int32 result)."""
    (v,), dt, shape = operand_arrays("clz", [x], (D.int32, D.int64))
    u = _unsigned(v).astype(np.uint64)
    out = np.where(u != 0, dt.bits - 1 - _highest_bit(u, dt.bits), dt.bits).astype(np.int32)
    return tensor(out, D.int32, shape)


def popc(x):
    """Set bits (int32 result)."""
    (v,), dt, shape = operand_arrays("popc", [x], (D.int32, D.int64))
    u = _unsigned(v).astype(np.uint64)
    count = np.zeros(u.shape, np.int32)
    for byte in range(dt.bits // 8):
        count += _POPCOUNT[((u >> np.uint64(8 * byte)) & np.uint64(0xFF)).astype(np.intp)]
    return tensor(count, D.int32, shape)


_POPCOUNT = np.array([bin(i).count("1") for i in range(256)], np.int32)


def ffs(x):
    """Position (1-based) of the least significant set bit, 0 for 0 (int32 result)."""
    (v,), dt, shape = operand_arrays("ffs", [x], (D.int32, D.int64))
    u = _unsigned(v).astype(np.uint64)
    low = u & (~u + np.uint64(1))            # the lowest set bit alone
    out = np.where(u != 0, _highest_bit(low, dt.bits) + 1, 0).astype(np.int32)
    return tensor(out, D.int32, shape)


def brev(x):
    """The bits in reverse order."""
    (v,), dt, shape = operand_arrays("brev", [x], (D.int32, D.int64))
    u = _unsigned(v)
    out = np.zeros(u.shape, u.dtype)
    for byte in range(dt.bits // 8):
        b = ((u >> u.dtype.type(8 * byte)) & u.dtype.type(0xFF)).astype(np.intp)
        out |= _REVERSED[b].astype(u.dtype) << u.dtype.type(dt.bits - 8 - 8 * byte)
    return tensor(out.view(v.dtype), dt, shape)


_REVERSED = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], np.uint64)


def mulhi(x, y):
    """The high half of the full product (int32, uint32, int64, uint64)."""
    (a, b), dt, shape = operand_arrays("mulhi", [x, y], (D.int32, D.uint32, D.int64, D.uint64))
    if dt.bits == 32:
        wide = a.astype(np.int64) * b.astype(np.int64)
        return tensor((wide >> np.int64(32)).astype(dt.container), dt, shape)
    hi = np.vectorize(lambda p, q: (int(p) * int(q)) >> 64, otypes=[object])(a, b)
    mask = (1 << 64) - 1
    out = np.array([h & mask for h in np.ravel(hi)], np.uint64).reshape(np.shape(hi))
    return tensor(out.view(dt.container) if dt.is_signed() else out, dt, shape)


def mul24(x, y):
    """The low 32 bits of the product of the operands' low 24 bits (sign-extended for int32)."""
    (a, b), dt, shape = operand_arrays("mul24", [x, y], (D.int32, D.uint32))
    if dt.is_signed():
        a24 = (a.astype(np.int64) << np.int64(40)) >> np.int64(40)
        b24 = (b.astype(np.int64) << np.int64(40)) >> np.int64(40)
    else:
        a24, b24 = a.astype(np.int64) & 0xFFFFFF, b.astype(np.int64) & 0xFFFFFF
    return tensor((a24 * b24).astype(np.uint64).astype(np.uint32).view(dt.container), dt, shape)


def sad(x, y, z):
    """|x - y| + z (z unsigned)."""
    xs, ys, zs = (to_tensor(t) for t in (x, y, z))
    (a, b), dt, shape = operand_arrays("sad", [xs, ys], (D.int32, D.uint32))
    (c,), _, shape_z = operand_arrays("sad", [zs], (D.uint32,))
    shape = broadcast_shape(shape, shape_z)
    diff = np.abs(a.astype(np.int64) - b.astype(np.int64))
    out = (diff + c.astype(np.int64)).astype(np.uint64).astype(np.uint32)
    return tensor(out.view(dt.container), dt, shape)


def _halving(name, rounding):
    def op(x, y):
        (a, b), dt, shape = operand_arrays(name, [x, y], (D.int32, D.uint32))
        total = a.astype(np.int64) + b.astype(np.int64) + rounding
        return tensor((total >> np.int64(1)).astype(dt.container), dt, shape)
    op.__name__ = name
    return op


hadd = _halving("hadd", 0)         # (x + y) >> 1 without overflow
rhadd = _halving("rhadd", 1)       # (x + y + 1) >> 1 without overflow


def byte_perm(x, y, s):
    """Bytes of the pair (y, x) picked by the low nibbles of s, as PTX's prmt: each of the result's
    four bytes is byte (s >> 4k) & 7 of the 8-byte value y:x."""
    (a, b, sel), dt, shape = operand_arrays("byte_perm", [x, y, s], (D.int32,))
    pair = (_unsigned(b).astype(np.uint64) << np.uint64(32)) | _unsigned(a).astype(np.uint64)
    sel = _unsigned(sel).astype(np.uint64)
    out = np.zeros(pair.shape, np.uint64)
    for k in range(4):
        which = (sel >> np.uint64(4 * k)) & np.uint64(7)
        out |= ((pair >> (which * np.uint64(8))) & np.uint64(0xFF)) << np.uint64(8 * k)
    return tensor(out.astype(np.uint32).view(np.int32), dt, shape)


def int_abs(x):
    """|x| of int32 and int64 (libdevice.abs on integers); the most negative value stays itself."""
    (v,), dt, shape = operand_arrays("abs", [x], (D.int32, D.int64))
    return tensor(np.abs(v), dt, shape)
