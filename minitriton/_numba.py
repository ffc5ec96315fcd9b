"""The few loops numpy does slowly: half-precision conversion and ordered atomics.

numpy converts float16 through a scalar loop (about 3 ns an element); a bit-exact numba
loop does it several times faster, which matters because every fp16 buffer a kernel touches
is converted once per launch.
"""
from __future__ import annotations

import numba
import numpy as np

_HALF_TO_FLOAT = np.arange(65536, dtype=np.uint16).view(np.float16).astype(np.float32)


@numba.njit(cache=True, parallel=False)
def _h2f(src, table, out):
    for i in range(src.size):
        out[i] = table[src[i]]


@numba.njit(cache=True, inline="always")
def _f2h_bits(f):
    """IEEE round-to-nearest-even float32 bits -> float16 bits (numpy's algorithm)."""
    sign = (f >> 16) & 0x8000
    f &= 0x7FFFFFFF
    if f >= 0x47800000:
        if f >= 0x7F800000 and (f & 0x007FFFFF) != 0:
            return sign | 0x7E00 | ((f & 0x007FFFFF) >> 13)
        return sign | 0x7C00
    if f < 0x38800000:
        if f < 0x33000000:
            return sign
        e = f >> 23
        m = 0x800000 | (f & 0x7FFFFF)
        shift = 126 - e
        h = m >> shift
        rem = m & ((1 << shift) - 1)
        half = 1 << (shift - 1)
        if rem > half or (rem == half and (h & 1) == 1):
            h += 1
        return sign | h
    h = (((f >> 23) - 112) << 10) | ((f & 0x7FFFFF) >> 13)
    rem = f & 0x1FFF
    if rem > 0x1000 or (rem == 0x1000 and (h & 1) == 1):
        h += 1
    return sign | h


@numba.njit(cache=True, parallel=False)
def _f2h(src, out):
    for i in range(src.size):
        out[i] = _f2h_bits(src[i])


@numba.njit(cache=True, parallel=False)
def _round_half(src, table, out):
    for i in range(src.size):
        out[i] = table[_f2h_bits(src[i])]


_SMALL = 1 << 14  # below this, numpy's own loop beats numba's thread start-up


def half_to_float(a: np.ndarray) -> np.ndarray:
    """float16 array -> float32 array, bit-exact."""
    if a.size < _SMALL:
        return a.astype(np.float32)
    src = np.ascontiguousarray(a).view(np.uint16)
    out = np.empty(a.shape, np.float32)
    _h2f(src.reshape(-1), _HALF_TO_FLOAT, out.reshape(-1))
    return out


def float_to_half(a: np.ndarray) -> np.ndarray:
    """float32 array -> float16 array, round to nearest even like numpy."""
    if a.size < _SMALL:
        return a.astype(np.float16)
    src = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    out = np.empty(a.shape, np.uint16)
    _f2h(src.reshape(-1), out.reshape(-1))
    return out.view(np.float16)


def round_to_half(a: np.ndarray) -> np.ndarray:
    """float32 values rounded to the nearest float16, kept in float32."""
    if a.size < _SMALL:
        return a.astype(np.float16).astype(np.float32)
    src = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    out = np.empty(a.shape, np.float32)
    _round_half(src.reshape(-1), _HALF_TO_FLOAT, out.reshape(-1))
    return out


@numba.njit(cache=True)
def _atomic(buf, offs, vals, op, half):
    """Apply atomics lane by lane in program order; return each lane's old value."""
    old = np.empty(offs.size, buf.dtype)
    for i in range(offs.size):
        o = offs[i]
        cur = buf[o]
        old[i] = cur
        v = vals[i]
        if op == 0:
            new = cur + v
        elif op == 1:
            new = cur if cur >= v else v
        elif op == 2:
            new = cur if cur <= v else v
        else:
            new = v
        if half:
            new = _HALF_TO_FLOAT[_f2h_bits(np.float32(new).view(np.uint32))]
        buf[o] = new
    return old


ATOMIC_OPS = {"add": 0, "max": 1, "min": 2, "xchg": 3}


def atomic_apply(buf: np.ndarray, offs: np.ndarray, vals: np.ndarray, op: str, half: bool) -> np.ndarray:
    return _atomic(buf, offs.astype(np.int64), vals.astype(buf.dtype), ATOMIC_OPS[op], half)
