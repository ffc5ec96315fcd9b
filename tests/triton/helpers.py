"""Host-side helpers for the tests ported from Triton (tests/triton/README.md).

Triton's tests build their inputs with helpers from `triton._internal_testing` and move them
to the GPU with torch; here inputs are numpy arrays, which minitriton's kernels take directly.
These are our own versions of those helpers, with the behaviour the ported tests rely on:
random integers never zero (so division tests need no special case), normal floats, and
`patch_kernel` rebuilding a kernel from its source with text substituted, as Triton's
interpreter mode does (here the new source is registered with linecache so that minitriton,
which rewrites a kernel from its source, can read it).
"""
from __future__ import annotations

import inspect
import itertools
import linecache
import textwrap

import ml_dtypes
import numpy as np
import pytest

import minitriton as triton
import minitriton.language as tl

int_dtypes = ["int8", "int16", "int32", "int64"]
uint_dtypes = ["uint8", "uint16", "uint32", "uint64"]
integral_dtypes = int_dtypes + uint_dtypes
float_dtypes = ["float16", "float32", "float64"]
float_dtypes_with_bfloat16 = float_dtypes + ["bfloat16"]
dtypes = integral_dtypes + float_dtypes
# Triton's fp8 types and the ml_dtypes type that holds each on the host
float8_dtypes = {"float8e4nv": "float8_e4m3fn", "float8e5": "float8_e5m2", "float8e4b8": "float8_e4m3fnuz",
                 "float8e5b16": "float8_e5m2fnuz", "float8e4b15": None}   # e4b15: no host type; see below
dtypes_with_bfloat16 = dtypes + ["bfloat16"]

_counter = itertools.count()


def numpy_random(shape, dtype_str, rs: np.random.RandomState | None = None, low=None, high=None):
    """Random values of a dtype named by string: integers uniform in [low, high) within the
    type's range and never zero, floats standard normal, bools fair coins."""
    rs = rs if rs is not None else np.random.RandomState(seed=17)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if dtype_str in integral_dtypes:
        info = np.iinfo(getattr(np, dtype_str))
        lo = info.min if low is None else max(low, info.min)
        hi = info.max if high is None else min(high, info.max)
        x = rs.randint(lo, hi, shape, dtype=getattr(np, dtype_str))
        x[x == 0] = 1
        return x
    if dtype_str == "bool":
        return rs.randint(0, 2, shape).astype(bool)
    if dtype_str in float_dtypes:
        return rs.normal(0, 1, shape).astype(getattr(np, dtype_str))
    if dtype_str == "bfloat16":
        return rs.normal(0, 1, shape).astype(ml_dtypes.bfloat16)
    if dtype_str == "float8e4b15":  # random bits, without the two NaN codes (0x7f, 0xff)
        bits = rs.randint(0, 256, shape).astype(np.uint8)
        bits[(bits & 0x7f) == 0x7f] = 0x7e
        return bits
    if dtype_str in float8_dtypes:  # the bits (uint8) of finite values, as Triton's helper gives them
        return rs.normal(0, 1, shape).astype(getattr(ml_dtypes, float8_dtypes[dtype_str])).view(np.uint8)
    raise ValueError(f"numpy_random: unsupported dtype {dtype_str!r}")


def to_triton(x, device="cpu", dst_type=None):
    """The array a kernel is given: a copy, as torch's move to the device makes one (of
    `dst_type` when named; fp8 bits seen as the fp8 type, as Triton's `reinterpret`)."""
    x = np.asarray(x)
    if dst_type in float8_dtypes:
        return triton.reinterpret(np.array(x, order="C", copy=True), getattr(tl, dst_type))
    if dst_type is not None and x.dtype != np.dtype(getattr(ml_dtypes, dst_type, dst_type)):
        x = x.astype(getattr(ml_dtypes, dst_type, dst_type))
    return np.array(x, order="C", copy=True)     # a device copy: the host array stays as it was


def to_numpy(x):
    return np.asarray(x)


def check_type_supported(dtype, device="cpu"):
    """Triton's interpreter skips bfloat16 (numpy has no such type); here host arrays hold it as
    ml_dtypes.bfloat16, so every type runs."""


def patch_kernel(template, to_replace: dict, namespace: dict | None = None):
    """A new kernel from `template`'s source with each key replaced by its value, defined in the
    template's module globals (or `namespace`)."""
    src = textwrap.dedent(inspect.getsource(template.fn))
    for k, v in to_replace.items():
        src = src.replace(k, v)
    filename = f"<patched {template.fn.__name__} {next(_counter)}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    scope = dict(template.fn.__globals__ if namespace is None else namespace)
    local: dict = {}
    exec(compile(src, filename, "exec"), scope, local)
    return local[template.fn.__name__]


def bitwidth(dtype: str) -> int:
    return int("".join(c for c in dtype if c.isdigit()) or 0)


def sorted_pair(a, b):
    return (a, b) if a < b else (b, a)




def stride(x: np.ndarray, dim: int) -> int:
    """`x.stride(dim)` of a torch tensor: the step in elements along `dim`."""
    return x.strides[dim] // x.itemsize


def fp8_to_float32(x: np.ndarray, dtype_str: str) -> np.ndarray:
    """The values of fp8 bits (uint8) as float32."""
    if dtype_str == "float8e4b15":    # sign, 4 exponent bits of bias 15, 3 mantissa bits; 0x7f/0xff NaN
        b = np.asarray(x).view(np.uint8).astype(np.int64)
        sign, exp, man = np.where(b & 0x80, -1.0, 1.0), (b >> 3) & 0xf, b & 0x7
        mag = np.where(exp == 0, man / 8.0 * 2.0 ** -14, (1 + man / 8.0) * 2.0 ** (exp - 15.0))
        return np.where((b & 0x7f) == 0x7f, np.nan, sign * mag).astype(np.float32)
    return np.asarray(x).view(getattr(ml_dtypes, float8_dtypes[dtype_str])).astype(np.float32)


def make_ptr_str(name, shape):
    """Triton's helper: the pointer expression of a contiguous block of `shape` at `name`."""
    rank = len(shape)
    offsets, stride = [], 1
    for i in reversed(range(rank)):
        idx = ', '.join([':' if ii == i else 'None' for ii in range(rank)])
        offsets += [f'tl.arange(0, {shape[i]})[{idx}]*{stride}']
        stride *= shape[i]
    return f"{name} + {' + '.join(offsets)}"


# -- microscaling operands (our versions of Triton's test_mxfp MXFP4Tensor / MXScaleTensor) ----
E2M1_VALUES = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0],
                       np.float32)


def mxfp4_random(shape, rs) -> np.ndarray:
    """Random e2m1 codes (0..15, one per value)."""
    return rs.randint(0, 16, shape).astype(np.uint8)


def mxfp4_pack(codes: np.ndarray, dim: int) -> np.ndarray:
    """Two e2m1 codes to a byte along `dim`, the even-indexed one in the low nibble."""
    c = np.moveaxis(codes, dim, -1)
    packed = (c[..., 0::2] | (c[..., 1::2] << 4)).astype(np.uint8)
    return np.ascontiguousarray(np.moveaxis(packed, -1, dim))


def e8m0_random(shape, rs, high=32.0) -> np.ndarray:
    """Random e8m0 scale codes: powers of two from 2**-8 up to `high` (never the NaN code)."""
    return rs.randint(127 - 8, 127 + int(np.log2(high)) + 1, shape).astype(np.uint8)


def e8m0_from_float(x: np.ndarray) -> np.ndarray:
    """The e8m0 code of the power of two at or below each positive value."""
    return np.clip(np.floor(np.log2(np.maximum(x, 2.0 ** -127))) + 127, 0, 254).astype(np.uint8)


def e8m0_values(codes: np.ndarray) -> np.ndarray:
    return np.ldexp(np.float32(1.0), codes.astype(np.int32) - 127).astype(np.float32)
