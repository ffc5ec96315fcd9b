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
                 "float8e5b16": "float8_e5m2fnuz"}
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
    if dtype_str in float8_dtypes:  # the bits (uint8) of finite values, as Triton's helper gives them
        return rs.normal(0, 1, shape).astype(getattr(ml_dtypes, float8_dtypes[dtype_str])).view(np.uint8)
    raise ValueError(f"numpy_random: unsupported dtype {dtype_str!r}")


def to_triton(x, device="cpu", dst_type=None):
    """The array a kernel is given: a copy, as torch's move to the device makes one (of
    `dst_type` when named; fp8 bits seen as the fp8 type, as Triton's `reinterpret`)."""
    x = np.asarray(x)
    if dst_type in float8_dtypes:
        return triton.reinterpret(np.array(x, order="C", copy=True), getattr(tl, dst_type))
    if dst_type is not None and dst_type != "bfloat16" and x.dtype != np.dtype(dst_type):
        x = x.astype(dst_type)
    return np.array(x, order="C", copy=True)     # a device copy: the host array stays as it was


def to_numpy(x):
    return np.asarray(x)


def check_type_supported(dtype, device="cpu"):
    """Skip where Triton's interpreter skips: it has no bfloat16 host arrays."""
    if str(dtype) in ("bfloat16", "bf16"):
        pytest.skip("bfloat16 is not supported in the interpreter")


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
