"""Triton's host-side helpers (`triton.cdiv`, `triton.next_power_of_2`, `triton.reinterpret`,
`triton.set_allocator`): plain Python around a launch, no kernel involved."""
from __future__ import annotations

import numpy as np

from . import dtypes as D


def cdiv(x, y):
    return (x + y - 1) // y


def reinterpret(array: np.ndarray, dtype):
    """The same memory seen as another element type of the same width, as `triton.reinterpret`
    does (e.g. a uint8 array as `tl.float8e4nv`)."""
    dtype = dtype.value if isinstance(dtype, D.constexpr) else dtype
    if not isinstance(array, np.ndarray):
        raise TypeError(f"reinterpret: array must be a numpy array, got {type(array).__name__}")
    if not isinstance(dtype, D.dtype):
        raise TypeError(f"reinterpret: dtype must be a tl dtype such as tl.float8e5, got {dtype!r}")
    if array.dtype.itemsize != dtype.np.itemsize:
        raise ValueError(f"reinterpret: {array.dtype} elements are {array.dtype.itemsize} bytes but {dtype} "
                         f"elements are {dtype.np.itemsize}")
    return array.view(dtype.np)


def next_power_of_2(n: int) -> int:
    n = int(n)
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


_allocator = None


def set_allocator(allocator):
    """Triton's `triton.set_allocator(fn)`: the function its kernels call for global scratch
    memory (tensor descriptors made in a kernel need some on a GPU).  minitriton's launches need
    none, so the function is kept, never called; it must be callable, as Triton expects."""
    global _allocator
    if allocator is not None and not callable(allocator):
        raise TypeError(f"set_allocator: allocator must be callable(size, alignment, stream), got {allocator!r}")
    _allocator = allocator
