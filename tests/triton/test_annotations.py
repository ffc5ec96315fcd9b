"""Triton's python/test/unit/language/test_annotations.py, ported to minitriton: an integer
annotation types a scalar argument (`v: tl.uint8` makes 3 a uint8), and annotations that name no
Triton type (a tensor class, `int` on an array) are no error.

Source: triton-lang/triton (MIT licence), the stored copy at commit
0b057fca1b9988afcfecd535b67d36ce92c0a5e9.  Kernels unchanged; host code ours on numpy.  Triton's
test reads the typed signature and the conversions in its TTIR (`%arg1: i8`, `arith.extui`,
`arith.uitofp`); there is no TTIR here, so the port checks what they stand for: the argument's
type inside the kernel and the value stored after its conversion to float.
"""
from __future__ import annotations

import numpy as np
import pytest

import minitriton as triton                 # was: import triton
import minitriton.language as tl            # was: import triton.language as tl


def annotated_function(return_type=None, **arg_types):
    """A decorator to add annotations to a function."""

    def decorator(func):
        func.__annotations__ = {**arg_types, 'return': return_type}
        return func

    return decorator


# Test integer annotations
@pytest.mark.parametrize(("signed", "width"), [
    (signed, width) for signed in [False, True]\
                    for width in [8, 16, 32, 64]
] + [(False, 1)]
                         )
def test_int_annotation(signed, width, device):

    @triton.jit
    @annotated_function(X=np.ndarray, v=f"tl.{'' if signed else 'u'}int{width}")
    def _kernel(X, v):
        tl.store(X + v, v)

    x = np.zeros(4, np.float32)
    _kernel[(1, )](x, 1 if width == 1 else 3)          # (a 1-bit integer holds 0 or 1)
    stored = 1 if width == 1 else 3
    assert x[stored] == stored and np.count_nonzero(x) == 1

    # what the TTIR's `%arg1: i{width}` says: the argument has the annotated type
    want = tl.int1 if width == 1 else getattr(tl, f"{'' if signed else 'u'}int{width}")   # (Triton has no uint1)

    @triton.jit
    @annotated_function(X=np.ndarray, v=f"tl.{'' if signed else 'u'}int{width}")
    def _typed(X, v):
        tl.store(X, v.dtype == want)

    flag = np.zeros(1, np.int32)
    _typed[(1, )](flag, 1)
    assert flag[0] == 1


# Test that unknown annotations do not emit an error
def test_unknown_annotation(device):

    @triton.jit
    def _kernel(X: np.ndarray, N: int, BLOCK_SIZE: tl.constexpr):
        pass

    x = np.empty(1, np.float32)
    _kernel[(1, )](x, x.shape[0], 32)
    try:
        _kernel[(1, )](x.shape[0], x.shape[0], 32)
    except AttributeError:
        pass
