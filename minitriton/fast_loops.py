"""The few loops numpy does slowly: half-precision conversion and ordered atomics.

numpy converts float16 through a scalar loop (about 3 ns an element); a bit-exact numba
loop does it several times faster, which matters because every fp16 buffer a kernel touches
is converted once per launch.
"""
from __future__ import annotations

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


def round_to_half(a: np.ndarray) -> np.ndarray:
    """float32 values rounded to the nearest float16, kept in float32."""
    if a.size < _SMALL:
        return a.astype(np.float16).astype(np.float32)
    src = np.ascontiguousarray(a, dtype=np.float32)
    out = np.empty(a.shape, np.float32)
    _round_half(src.reshape(-1), out.reshape(-1))
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
