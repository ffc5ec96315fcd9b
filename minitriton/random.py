"""Counter-based random numbers: Philox 4x32-10 (Salmon et al., SC 2011), giving the same
streams as Triton's `tl.rand`, `tl.randn`, `tl.randint` for the same seed and offsets.

A stream is a pure function of (seed, offset), so each lane's number does not depend on which
program computes it or in what order: the whole block is computed at once, the 32-bit rounds in
a numba loop (fast_loops.philox32), the 64-bit ones in numpy's uint64 arithmetic, which wraps as
the GPU's does.
"""
from __future__ import annotations

import numpy as np

from .dtypes import constexpr_value
from . import dtypes as D, fast_loops
from .tensor import tensor, to_tensor
from .shapes import broadcast_to, broadcast
from .elementwise import mulhi_unsigned

N_ROUNDS_DEFAULT = 10
# Philox-4x64's Weyl-sequence key increments and round multipliers (Salmon et al., table 2);
# Philox-4x32's are fast_loops', beside the loop that uses them
_CONSTANTS = {
    64: (0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B, 0xD2E7470EE14C6C93, 0xCA5A826395121157),
}
_LOW32 = np.uint64(0xFFFFFFFF)


def _rows(*vs):
    rows = max(v.shape[0] for v in vs)
    return [np.broadcast_to(v, (rows,) + v.shape[1:]) for v in vs]


def _philox_arrays(c, k0, k1, n_rounds, bits):
    if bits == 32:
        return fast_loops.philox32(c, k0, k1, n_rounds)
    key_a, key_b, round_a, round_b = (np.dtype(f"u{bits // 8}").type(x) for x in _CONSTANTS[bits])
    c0, c1, c2, c3 = c
    with np.errstate(over="ignore"):
        for _ in range(int(n_rounds)):
            hi_b, hi_a = mulhi_unsigned(round_b, c2, bits), mulhi_unsigned(round_a, c0, bits)
            c0, c1, c2, c3 = hi_b ^ c1 ^ k0, round_b * c2, hi_a ^ c3 ^ k1, round_a * c0
            k0, k1 = k0 + key_a, k1 + key_b
    return c0, c1, c2, c3


def _counters(cs, what):
    cs = [to_tensor(x) for x in cs]
    bits = cs[0].dtype.bits
    if bits not in (32, 64) or any(not x.dtype.is_int() or x.dtype.bits != bits for x in cs):
        raise TypeError(f"{what} counters must all be 32-bit or all 64-bit integers, got {[x.dtype for x in cs]}")
    return cs, bits, (D.uint32 if bits == 32 else D.uint64)


def _unsigned(x, shape, udt):
    return np.asarray(broadcast_to(x, shape).v, x.dtype.np).view(udt.np)


def _run(vals, k0, k1, shape, n_rounds, bits, udt):
    *vals, k0, k1 = _rows(*vals, k0, k1)
    return tuple(tensor(v, udt, shape) for v in _philox_arrays(vals, k0, k1, constexpr_value(n_rounds), bits))


def philox_impl(c0, c1, c2, c3, k0, k1, n_rounds=N_ROUNDS_DEFAULT):
    """`n_rounds` Philox rounds of counters (c0..c3) under key (k0, k1), all of one width."""
    cs, bits, udt = _counters((c0, c1, c2, c3, k0, k1), "philox_impl")
    shape = cs[0].shape
    vals = [_unsigned(x, shape, udt) for x in cs[:4]]
    keys = [np.asarray(x.v, x.dtype.np).view(udt.np).reshape((-1,) + (1,) * len(shape)) for x in cs[4:]]
    if any(x.shape for x in cs[4:]):
        raise TypeError("philox_impl keys must be scalars")
    return _run(vals, keys[0], keys[1], shape, n_rounds, bits, udt)


def _keys(seed, ndim: int, bits: int):
    """The Philox key words of a seed block, one row per program: for 32 bits the seed's low and
    high words, for 64 bits the seed itself and zero."""
    seed = to_tensor(seed)
    if not seed.dtype.is_int() or seed.shape:
        raise TypeError(f"the random seed must be an integer scalar, got {seed.dtype} {list(seed.shape)}")
    s = seed.v.reshape(-1).astype(np.int64 if seed.dtype.is_signed() else np.uint64).astype(np.uint64)
    s = s.reshape((-1,) + (1,) * ndim)
    if bits == 32:
        return (s & _LOW32).astype(np.uint32), (s >> np.uint64(32)).astype(np.uint32)
    return s, np.zeros_like(s)


def philox(seed, c0, c1, c2, c3, n_rounds=N_ROUNDS_DEFAULT):
    """Four blocks of random unsigned ints from four counter blocks and a seed."""
    cs, bits, udt = _counters((c0, c1, c2, c3), "philox")
    k0, k1 = _keys(seed, len(cs[0].shape), bits)
    shape = cs[0].shape
    return _run([_unsigned(x, shape, udt) for x in cs], k0, k1, shape, n_rounds, bits, udt)


def randint4x(seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    """Four blocks of random unsigned ints for (seed, offset): the offset is the first counter
    word and the others are zero, so 32-bit offsets run Philox-4x32 and 64-bit offsets
    Philox-4x64 (four uint64 blocks, the seed its whole key), as in Triton."""
    offset = to_tensor(offset)
    if not offset.dtype.is_int() or offset.dtype.bits not in (32, 64):
        raise TypeError(f"random offsets must be 32- or 64-bit integers, got {offset.dtype}")
    zero = offset * 0
    return philox(seed, offset, zero, zero, zero, n_rounds)


def randint(seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    return randint4x(seed, offset, n_rounds)[0]


def uint_to_uniform_float(x):
    """A random uint as a float in [0, 1): the magnitude of its signed value, scaled so that the
    largest never rounds up to 1.0."""
    x = to_tensor(x)
    if x.dtype.bits == 32:
        v, scale = x.v.view(np.int32) if x.v.dtype == np.uint32 else x.v.astype(np.int32), np.float32(4.6566127342e-10)
    elif x.dtype.bits == 64:
        v, scale = x.v.view(np.int64) if x.v.dtype == np.uint64 else x.v.astype(np.int64), np.float32(1.0842020432385337e-19)
    else:
        raise TypeError(f"uint_to_uniform_float needs a 32- or 64-bit integer block, got {x.dtype}")
    with np.errstate(over="ignore"):
        v = np.where(v < 0, -v - 1, v)
    return tensor(v.astype(np.float32) * scale, D.float32, x.shape)


def rand(seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    offset = to_tensor(offset)
    if offset.dtype.is_int() and offset.dtype.bits == 32:
        k0, k1 = _keys(seed, len(offset.shape), 32)
        if (k0 == k0.flat[0]).all() and (k1 == k1.flat[0]).all():   # one seed for every program
            c0 = np.asarray(offset.v, offset.dtype.np).view(np.uint32)
            out = fast_loops.philox32_uniform(c0, k0.flat[0], k1.flat[0], constexpr_value(n_rounds))
            return tensor(out, D.float32, offset.shape)
    return uint_to_uniform_float(randint(seed, offset, n_rounds))


def rand4x(seed, offsets, n_rounds=N_ROUNDS_DEFAULT):
    return tuple(uint_to_uniform_float(i) for i in randint4x(seed, offsets, n_rounds))


def pair_uniform_to_normal(u1, u2):
    """Box-Muller: two uniforms in [0, 1) to two independent standard normals."""
    t1, t2 = broadcast(to_tensor(u1), to_tensor(u2))
    shape = t1.shape
    v1, v2 = np.broadcast_arrays(t1.v.astype(np.float32), t2.v.astype(np.float32))
    v1 = np.maximum(np.float32(1.0e-7), v1)
    th = np.float32(6.283185307179586) * v2
    r = np.sqrt(np.float32(-2.0) * np.log(v1))
    return tensor(r * np.cos(th), D.float32, shape), tensor(r * np.sin(th), D.float32, shape)


def randn(seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    i1, i2, _, _ = randint4x(seed, offset, n_rounds)
    return pair_uniform_to_normal(uint_to_uniform_float(i1), uint_to_uniform_float(i2))[0]


def randn4x(seed, offset, n_rounds=N_ROUNDS_DEFAULT):
    u1, u2, u3, u4 = rand4x(seed, offset, n_rounds)
    return pair_uniform_to_normal(u1, u2) + pair_uniform_to_normal(u3, u4)
