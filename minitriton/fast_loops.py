"""The few loops numpy does slowly: half-precision conversion, ordered atomics, Philox, short-row
reductions, erf.

numpy converts float16 through a scalar loop (about 3 ns an element); a bit-exact numba
loop does it several times faster, which matters because every fp16 buffer a kernel touches
is converted once per launch.
"""
from __future__ import annotations

import math

import numba
import numpy as np

_HALF_TO_FLOAT = np.arange(65536, dtype=np.uint16).view(np.float16).astype(np.float32)


@numba.njit(cache=True)
def _h2f(src, out):
    """float16 bits -> float32, exact; selects instead of branches so the loop vectorizes."""
    obits = out.view(np.uint32)
    for i in range(src.size):
        h = np.int64(src[i])
        a = h & 0x7FFF
        normal = (a << 13) + ((127 - 15) << 23)
        special = 0x7F800000 | ((a & 0x3FF) << 13)
        sub = np.int64(np.float32(np.float32(a) * np.float32(5.960464477539063e-08)).view(np.uint32))
        r = sub if a < 0x400 else normal
        r = special if a >= 0x7C00 else r
        obits[i] = np.uint32(((h & 0x8000) << 16) | r)


@numba.njit(cache=True, inline="always")
def _f2h_bits(f, absf):
    """float32 (bits f, value |x| absf) -> float16 bits, round to nearest even, numpy-exact.

    Written with selects instead of branches so the loop vectorizes."""
    sign = (f >> 16) & 0x8000
    a = f & 0x7FFFFFFF
    normal = ((a + 0xFFF + ((a >> 13) & 1)) >> 13) - (112 << 10)
    # subnormal halves: round(|x| * 2^24), by adding 2^23 in float32 arithmetic
    sub = np.int64(np.float32(np.float32(absf * np.float32(16777216.0)) + np.float32(8388608.0)).view(np.uint32)) \
        - 0x4B000000
    h = sub if a < 0x38800000 else normal
    h = 0x7C00 if a >= 0x47800000 else h
    nan_payload = (a >> 13) & 0x3FF
    h = (0x7C00 | (nan_payload if nan_payload else 1)) if a > 0x7F800000 else h
    return sign | h


@numba.njit(cache=True)
def _f2h(src, out):
    bits = src.view(np.uint32)
    for i in range(src.size):
        out[i] = np.uint16(_f2h_bits(np.int64(bits[i]), abs(src[i])))


@numba.njit(cache=True)
def _round_half(src, out):
    """float32 -> nearest float16 value, kept in float32 (same bits as a round trip through float16)."""
    bits = src.view(np.uint32)
    obits = out.view(np.uint32)
    for i in range(src.size):
        f = np.int64(bits[i])
        a = f & 0x7FFFFFFF
        normal = (a + 0xFFF + ((a >> 13) & 1)) & 0xFFFFE000
        normal = 0x7F800000 if normal >= 0x47800000 else normal
        sub = np.int64(np.float32(np.float32(abs(src[i]) + np.float32(0.5)) - np.float32(0.5)).view(np.uint32))
        r = sub if a < 0x38800000 else normal
        payload = (a >> 13) & 0x3FF
        r = (0x7F800000 | ((payload if payload else 1) << 13)) if a > 0x7F800000 else r
        r = 0x7F800000 if a == 0x7F800000 else r
        obits[i] = np.uint32((f & 0x80000000) | r)


_SMALL = 1 << 14  # below this, numpy's own loop beats numba's thread start-up


def half_to_float(a: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """float16 array -> float32 array, bit-exact."""
    if a.size < _SMALL:
        return a.astype(np.float32)
    src = np.ascontiguousarray(a).view(np.uint16)
    out = np.empty(a.shape, np.float32) if out is None else out
    _h2f(src.reshape(-1), out.reshape(-1))
    return out


def float_to_half(a: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """float32 array -> float16 array, round to nearest even like numpy."""
    if a.size < _SMALL:
        return a.astype(np.float16)
    src = np.ascontiguousarray(a, dtype=np.float32)
    out = np.empty(a.shape, np.uint16) if out is None else out.view(np.uint16)
    _f2h(src.reshape(-1), out.reshape(-1))
    return out.view(np.float16)


@numba.njit(cache=True)
def _round_half_split(src, out):
    """_round_half in float arithmetic, five times faster (its integer selects do not vectorize
    well): Veltkamp's split, t - (t - x) with t = x * (2^13 + 1), rounds |x| to 11 significant
    bits, to nearest even; below the smallest normal half, adding and taking away 0.5 rounds
    to a multiple of 2^-24; from 65520 up, infinity.  Checked against _round_half on every
    float32 but the NaNs, whose payloads it would keep: it returns whether it met one."""
    nan = False
    for i in range(src.size):
        x = src[i]
        ax = abs(x)
        t = ax * np.float32(8193.0)
        r = t - (t - ax)
        r = (ax + np.float32(0.5)) - np.float32(0.5) if ax < np.float32(6.103515625e-05) else r
        r = np.float32(np.inf) if ax >= np.float32(65520.0) else r
        out[i] = np.copysign(r, x)
        nan |= x != x
    return nan


def round_to_half(a: np.ndarray) -> np.ndarray:
    """float32 values rounded to the nearest float16, kept in float32."""
    if a.size < _SMALL:
        return a.astype(np.float16).astype(np.float32)
    src = np.ascontiguousarray(a, dtype=np.float32).reshape(-1)
    out = np.empty(a.shape, np.float32)
    if _round_half_split(src, out.reshape(-1)):
        _round_half(src, out.reshape(-1))
    return out


@numba.njit(cache=True)
def _combine(cur, v, op):
    if op == 0:
        return cur + v
    if op == 1:
        return cur if cur >= v else v
    if op == 2:
        return cur if cur <= v else v
    return v


@numba.njit(cache=True)
def _atomic(buf, offs, vals, op):
    """Apply atomics lane by lane in program order; return each lane's old value."""
    old = np.empty(offs.size, buf.dtype)
    for i in range(offs.size):
        o = offs[i]
        old[i] = buf[o]
        buf[o] = _combine(buf[o], vals[i], op)
    return old


@numba.njit(cache=True)
def _atomic_bits(buf, offs, vals, op):
    """Bitwise atomics (integers only)."""
    old = np.empty(offs.size, buf.dtype)
    for i in range(offs.size):
        o = offs[i]
        cur = buf[o]
        old[i] = cur
        if op == 4:
            buf[o] = cur & vals[i]
        elif op == 5:
            buf[o] = cur | vals[i]
        else:
            buf[o] = cur ^ vals[i]
    return old


@numba.njit(cache=True)
def _atomic_half(buf, offs, vals, op):
    """fp16 values held in float32: each result is rounded to fp16 before it is stored."""
    old = np.empty(offs.size, buf.dtype)
    for i in range(offs.size):
        o = offs[i]
        old[i] = buf[o]
        new = np.float32(_combine(buf[o], vals[i], op))
        buf[o] = _HALF_TO_FLOAT[_f2h_bits(np.int64(new.view(np.uint32)), abs(new))]
    return old


ATOMIC_OPS = {"add": 0, "max": 1, "min": 2, "xchg": 3, "and": 4, "or": 5, "xor": 6}


@numba.njit(cache=True)
def _cas(buf, offs, cmp, vals):
    old = np.empty(offs.size, buf.dtype)
    for i in range(offs.size):
        cur = buf[offs[i]]
        old[i] = cur
        if cur == cmp[i]:
            buf[offs[i]] = vals[i]
    return old


def atomic_cas(buf: np.ndarray, offs: np.ndarray, cmp: np.ndarray, vals: np.ndarray) -> np.ndarray:
    return _cas(buf, offs.astype(np.int64), cmp.astype(buf.dtype), vals.astype(buf.dtype))


def atomic_apply(buf: np.ndarray, offs: np.ndarray, vals: np.ndarray, op: str, half: bool) -> np.ndarray:
    code = ATOMIC_OPS[op]
    fn = _atomic_bits if code >= 4 else _atomic_half if half else _atomic
    return fn(buf, offs.astype(np.int64), vals.astype(buf.dtype), code)


# Philox 4x32-10's constants (Salmon et al., table 2): key increments, round multipliers
_PHILOX_KEY_A, _PHILOX_KEY_B = np.uint32(0x9E3779B9), np.uint32(0xBB67AE85)
_PHILOX_ROUND_A, _PHILOX_ROUND_B = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_SHIFT32 = np.uint64(32)
_CHUNK = 256      # lanes carried through all the rounds together: each round's loop vectorizes


@numba.njit(cache=True, inline="always")
def _philox_rounds(x0, x1, x2, x3, a, b, m, n_rounds):
    """Philox-4x32 rounds over the first m lanes of the chunk arrays, in place.  Each 32x32-bit
    product is one 64-bit multiply whose halves are the round's high and low words."""
    for _ in range(n_rounds):
        for j in range(m):
            pb = _PHILOX_ROUND_B * np.uint64(x2[j])
            pa = _PHILOX_ROUND_A * np.uint64(x0[j])
            y0 = np.uint32(pb >> _SHIFT32) ^ x1[j] ^ a[j]
            y2 = np.uint32(pa >> _SHIFT32) ^ x3[j] ^ b[j]
            x1[j] = np.uint32(pb)
            x3[j] = np.uint32(pa)
            x0[j] = y0
            x2[j] = y2
            a[j] += _PHILOX_KEY_A
            b[j] += _PHILOX_KEY_B


@numba.njit(cache=True)
def _philox32(c0, c1, c2, c3, k0, k1, n_rounds, o0, o1, o2, o3):
    x0, x1, x2, x3 = np.empty(_CHUNK, np.uint32), np.empty(_CHUNK, np.uint32), np.empty(_CHUNK, np.uint32), \
        np.empty(_CHUNK, np.uint32)
    a, b = np.empty(_CHUNK, np.uint32), np.empty(_CHUNK, np.uint32)
    for s in range(0, c0.size, _CHUNK):
        m = min(_CHUNK, c0.size - s)
        x0[:m] = c0[s:s + m]
        x1[:m] = c1[s:s + m]
        x2[:m] = c2[s:s + m]
        x3[:m] = c3[s:s + m]
        a[:m] = k0[s:s + m]
        b[:m] = k1[s:s + m]
        _philox_rounds(x0, x1, x2, x3, a, b, m, n_rounds)
        o0[s:s + m] = x0[:m]
        o1[s:s + m] = x1[:m]
        o2[s:s + m] = x2[:m]
        o3[s:s + m] = x3[:m]


@numba.njit(cache=True)
def _philox32_uniform(c0, k0, k1, n_rounds, out):
    """tl.rand's numbers: counters (c0, 0, 0, 0) under one key, the first word as a float in
    [0, 1) (the magnitude of its signed value, scaled so that the largest stays below 1.0)."""
    x0, x1, x2, x3 = np.empty(_CHUNK, np.uint32), np.empty(_CHUNK, np.uint32), np.empty(_CHUNK, np.uint32), \
        np.empty(_CHUNK, np.uint32)
    a, b = np.empty(_CHUNK, np.uint32), np.empty(_CHUNK, np.uint32)
    scale = np.float32(4.6566127342e-10)
    for s in range(0, c0.size, _CHUNK):
        m = min(_CHUNK, c0.size - s)
        x0[:m] = c0[s:s + m]
        x1[:m] = 0
        x2[:m] = 0
        x3[:m] = 0
        a[:m] = k0
        b[:m] = k1
        _philox_rounds(x0, x1, x2, x3, a, b, m, n_rounds)
        for j in range(m):
            v = np.int64(np.int32(x0[j]))
            v = -v - 1 if v < 0 else v
            out[s + j] = np.float32(v) * scale


def philox32(counters, k0, k1, n_rounds: int):
    """Philox-4x32 of four uint32 counter arrays under keys k0, k1 (uint32, broadcast to them):
    the four uint32 result arrays, the same bits as the block arithmetic in minitriton.random."""
    shape = np.broadcast_shapes(*(c.shape for c in counters), k0.shape, k1.shape)
    flat = [np.ascontiguousarray(np.broadcast_to(x, shape), dtype=np.uint32).reshape(-1)
            for x in (*counters, k0, k1)]
    out = [np.empty(shape, np.uint32) for _ in range(4)]
    _philox32(*flat, int(n_rounds), *(o.reshape(-1) for o in out))
    return tuple(out)


def philox32_uniform(c0, k0: int, k1: int, n_rounds: int):
    """uint_to_uniform_float of the first word of Philox-4x32 of counters (c0, 0, 0, 0) under
    one key (k0, k1): tl.rand for 32-bit offsets, without the other three words."""
    out = np.empty(c0.shape, np.float32)
    _philox32_uniform(np.ascontiguousarray(c0, dtype=np.uint32).reshape(-1), np.uint32(k0), np.uint32(k1),
                      int(n_rounds), out.reshape(-1))
    return out


@numba.njit(cache=True)
def _select(cond, x, y, out):
    """Bit patterns chosen by masks, not by branches: a random condition would mispredict
    half of them.  x, y, out: unsigned views of one width."""
    zero = out.dtype.type(0)
    for i in range(out.size):
        m = zero - out.dtype.type(cond[i])
        out[i] = (x[i] & m) | (y[i] & ~m)


@numba.njit(cache=True)
def _select_one(cond, x, y0, out):
    """_select with y one value (a mask's `other`): a loop of its own, since a stride of 0
    read through a variable keeps the loop from vectorizing (40x slower)."""
    zero = out.dtype.type(0)
    for i in range(out.size):
        m = zero - out.dtype.type(cond[i])
        out[i] = (x[i] & m) | (y0 & ~m)


def select(cond: np.ndarray, x: np.ndarray, y: np.ndarray):
    """np.where(cond, x, y), bit for bit, for a big block whose condition has the result's shape
    and whose sides each have it or are one value: numpy's where takes ~4 ns an element on a
    random condition, this loop a fraction of that.  None when the operands are not of that form."""
    shape = cond.shape
    if x.dtype != y.dtype or cond.dtype != np.bool_ or not cond.flags.c_contiguous or cond.size < _SMALL:
        return None
    sides = []
    for v in (x, y):
        if v.size == 1:
            sides.append((v.reshape(1), 0))
        elif v.shape == shape and v.flags.c_contiguous:
            sides.append((v.reshape(-1), 1))
        else:
            return None
    bits = np.dtype(f"u{x.dtype.itemsize}")
    out = np.empty(shape, x.dtype)
    c, o = cond.reshape(-1).view(np.uint8), out.reshape(-1).view(bits)
    (vx, sx), (vy, sy) = ((v.view(bits), step) for v, step in sides)
    if sx and sy:
        _select(c, vx, vy, o)
    elif sx or sy:      # one side a single value: where(c, x, y) = where(~c, y, x)
        _select_one(c if sx else c ^ 1, vx if sx else vy, (vy if sx else vx)[0], o)
    else:
        out[...] = np.where(cond, x.reshape(()), y.reshape(()))
    return out


# nnan: the wrappers below pass only NaN-free floats, so the compare needs no NaN branch and the
# loop vectorizes; nsz: which of +0 and -0 a tie keeps is not defined (numpy's own reduce keeps
# either, depending on how its SIMD lanes split the row).
@numba.njit(cache=True, fastmath={"nnan", "nsz", "reassoc"})
def _row_extreme(src, out, largest):
    for r in range(src.shape[0]):
        m = src[r, 0]
        if largest:
            for j in range(1, src.shape[1]):
                m = src[r, j] if src[r, j] > m else m
        else:
            for j in range(1, src.shape[1]):
                m = src[r, j] if src[r, j] < m else m
        out[r] = m


@numba.njit(cache=True, inline="always")
def _pairwise(a, start, n):
    """numpy's pairwise sum of a[start:start + n] for n <= 128 (its PW_BLOCKSIZE), step for
    step: eight running sums, folded as a tree, then the tail.  Same bits as np.sum."""
    if n < 8:
        res = a.dtype.type(-0.0)
        for i in range(n):
            res += a[start + i]
        return res
    r0, r1, r2, r3 = a[start], a[start + 1], a[start + 2], a[start + 3]
    r4, r5, r6, r7 = a[start + 4], a[start + 5], a[start + 6], a[start + 7]
    i = start + 8
    stop = start + n - n % 8
    while i < stop:
        r0 += a[i]
        r1 += a[i + 1]
        r2 += a[i + 2]
        r3 += a[i + 3]
        r4 += a[i + 4]
        r5 += a[i + 5]
        r6 += a[i + 6]
        r7 += a[i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < start + n:
        res += a[i]
        i += 1
    return res


@numba.njit(cache=True)
def _row_sum(flat, n, out):
    for r in range(out.size):
        out[r] = out.dtype.type(0) + _pairwise(flat, r * n, n)


_ROW_TYPES = frozenset(np.dtype(t) for t in ("f4", "f8", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8"))
_SUM_TYPES = frozenset(np.dtype(t) for t in ("f4", "f8", "i4", "i8", "u4", "u8"))
_SHORT_ROW = 128    # numpy's pairwise block; wider rows numpy reduces as fast as these loops


def _short_rows(v: np.ndarray, types) -> bool:
    return (v.size >= _SMALL and v.ndim >= 1 and 2 <= v.shape[-1] <= _SHORT_ROW and v.dtype in types
            and v.flags.c_contiguous)


def row_extreme(v: np.ndarray, largest: bool):
    """np.fmax / np.fmin reduced over v's last axis: numpy reduces a short contiguous row
    element by element (about 0.8 ns an element for 64-wide rows, a Flash Attention row max),
    this loop in a third of that.  None when v is small, its rows are not short and
    contiguous, it is of another type, or it holds a NaN (whose fmax semantics the loop does
    not carry): numpy then does it."""
    if not _short_rows(v, _ROW_TYPES) or (v.dtype.kind == "f" and np.isnan(v).any()):
        return None
    out = np.empty(v.shape[:-1], v.dtype)
    _row_extreme(v.reshape(-1, v.shape[-1]), out.reshape(-1), largest)
    return out


def row_sum(v: np.ndarray):
    """np.sum over v's last axis, same bits (numpy's own pairwise order), in half numpy's time
    for short rows.  None when v is not of that form (see row_extreme)."""
    if not _short_rows(v, _SUM_TYPES):
        return None
    out = np.empty(v.shape[:-1], v.dtype)
    _row_sum(v.reshape(-1), v.shape[-1], out.reshape(-1))
    return out


@numba.njit(cache=True)
def _bounds(c):
    lo = hi = c[0]
    for i in range(1, c.size):
        v = c[i]
        lo = v if v < lo else lo
        hi = v if v > hi else hi
    return lo, hi


def bounds(c: np.ndarray) -> tuple:
    """(min, max) of a non-empty integer array as Python ints: the range checks of index
    arithmetic, done for every integer operation on per-program values.  One compiled pass
    costs a tenth of numpy's two reductions (about 1 us each on a few hundred elements)."""
    if c.dtype == np.int64 and c.flags.c_contiguous:
        lo, hi = _bounds(c.reshape(-1))
        return int(lo), int(hi)
    return int(c.min()), int(c.max())


@numba.njit(cache=True)
def _mask_boxes(m, starts, stops):
    """Per row r of m (rows, a, b): the smallest box [starts, stops) of axes (a, b) holding
    every set lane; returns whether each nonempty row's lanes fill their box, and how many."""
    box = True
    kept = np.zeros(m.shape[0], np.int64)
    for r in range(m.shape[0]):
        lo0, hi0, lo1, hi1, n = m.shape[1], -1, m.shape[2], -1, 0
        for i in range(m.shape[1]):
            for j in range(m.shape[2]):
                if m[r, i, j]:
                    n += 1
                    lo0 = min(lo0, i)
                    hi0 = max(hi0, i)
                    lo1 = min(lo1, j)
                    hi1 = max(hi1, j)
        kept[r] = n
        if n:
            starts[r, 0], stops[r, 0], starts[r, 1], stops[r, 1] = lo0, hi0 + 1, lo1, hi1 + 1
            box &= n == (hi0 + 1 - lo0) * (hi1 + 1 - lo1)
    return box, kept


def mask_boxes(m: np.ndarray):
    """For a bool mask (rows, *lanes) of at most two lane axes: (whether every row's set lanes
    fill a box, the boxes' starts and stops (rows, lane axes), set lanes per row).  One pass,
    where numpy's any / argmax / sum over each axis took a millisecond a matmul tile load."""
    rows, lanes = m.shape[0], m.shape[1:]
    m3 = np.ascontiguousarray(m).view(np.uint8).reshape((rows,) + (1,) * (2 - len(lanes)) + lanes)
    starts, stops = np.zeros((rows, 2), np.int64), np.zeros((rows, 2), np.int64)
    box, kept = _mask_boxes(m3, starts, stops)
    return box, starts[:, 2 - len(lanes):], stops[:, 2 - len(lanes):], kept


# Python's math.erf through np.vectorize costs about 120 ns an element (a GELU's erf over a 2048 x 1024
# block: 0.2 s); the same libm function compiled as a ufunc, the same bits, costs a seventh of that.
@numba.vectorize(["float64(float64)"], cache=True)
def erf(x):
    return math.erf(x)


@numba.vectorize(["float64(float64)"], cache=True)
def erfc(x):
    return math.erfc(x)
