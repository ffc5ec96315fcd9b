"""Triton's python/test/unit/language/test_lambda.py, ported to minitriton: lambdas as the combine
function of `tl.associative_scan` and `tl.reduce`, several in one kernel, capturing constexprs,
and refused when they capture a block or a runtime scalar.

Source: triton-lang/triton (MIT licence), the stored copy at commit
63f60a7d6af54a5f78b34e0f60c6c0834762e187.  Kernels unchanged; host code ours on numpy
(torch.tensor -> np.array, torch.testing.assert_close -> numpy's assert_allclose, torch.cumsum /
cummax -> numpy's cumsum / maximum.accumulate).
"""
import numpy as np
import pytest

import minitriton as triton                 # was: import triton
import minitriton.language as tl            # was: import triton.language as tl
from minitriton.compiler.errors import UnsupportedLanguageConstruct


def test_associative_scan_lambda_cumsum(device):
    x = np.array([1.0, 2.0, 3.0, 4.0, 5.0], dtype=np.float32)
    y = np.empty_like(x)

    @triton.jit
    def kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
        offsets = tl.arange(0, BLOCK)
        mask = offsets < n_elements
        val = tl.load(x_ptr + offsets, mask=mask, other=0.0)
        result = tl.associative_scan(val, axis=0, combine_fn=lambda a, b: a + b)
        tl.store(y_ptr + offsets, result, mask=mask)

    kernel[(1, )](x, y, x.size, BLOCK=8)

    np.testing.assert_allclose(y, np.cumsum(x), rtol=1e-3, atol=1e-5)


def test_associative_scan_lambda_max(device):
    x = np.array([1.0, 3.0, 2.0, 5.0, 4.0], dtype=np.float32)
    y = np.empty_like(x)

    @triton.jit
    def kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
        offsets = tl.arange(0, BLOCK)
        mask = offsets < n_elements
        val = tl.load(x_ptr + offsets, mask=mask, other=float("-inf"))
        result = tl.associative_scan(val, axis=0, combine_fn=lambda a, b: tl.maximum(a, b))
        tl.store(y_ptr + offsets, result, mask=mask)

    kernel[(1, )](x, y, x.size, BLOCK=8)

    np.testing.assert_allclose(y, np.maximum.accumulate(x), rtol=1e-3, atol=1e-5)


def test_reduce_lambda_product(device):
    x = np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32)
    y = np.empty(1, dtype=np.float32)

    @triton.jit
    def kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
        offsets = tl.arange(0, BLOCK)
        mask = offsets < n_elements
        val = tl.load(x_ptr + offsets, mask=mask, other=1.0)
        result = tl.reduce(val, axis=0, combine_fn=lambda a, b: a * b)
        tl.store(y_ptr, result)

    kernel[(1, )](x, y, x.size, BLOCK=4)

    np.testing.assert_allclose(y, np.array([24.0], np.float32), rtol=1e-3, atol=1e-5)


def test_multiple_lambdas_in_same_kernel(device):
    x = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    y = np.empty_like(x)

    @triton.jit
    def kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
        offsets = tl.arange(0, BLOCK)
        mask = offsets < n_elements
        val = tl.load(x_ptr + offsets, mask=mask, other=float("inf"))
        tl.reduce(val, axis=0, combine_fn=lambda a, b: a + b)
        scan_result = tl.associative_scan(val, axis=0, combine_fn=lambda a, b: tl.minimum(a, b))
        tl.store(y_ptr + offsets, scan_result, mask=mask)

    kernel[(1, )](x, y, x.size, BLOCK=4)

    np.testing.assert_allclose(y, np.array([1.0, 1.0, 1.0], np.float32), rtol=1e-3, atol=1e-5)


def test_lambda_constexpr_capture(device):
    x = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    y = np.empty_like(x)

    @triton.jit
    def kernel(x_ptr, y_ptr, n_elements, SCALE: tl.constexpr, BLOCK: tl.constexpr):
        offsets = tl.arange(0, BLOCK)
        mask = offsets < n_elements
        val = tl.load(x_ptr + offsets, mask=mask, other=0.0)
        result = tl.associative_scan(val, axis=0, combine_fn=lambda a, b: a + b + SCALE)
        tl.store(y_ptr + offsets, result, mask=mask)

    kernel[(1, )](x, y, x.size, SCALE=2.0, BLOCK=4)

    np.testing.assert_allclose(y, np.array([1.0, 5.0, 10.0], np.float32), rtol=1e-3, atol=1e-5)


def test_reduce_lambda_constexpr_capture(device):
    x = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    y = np.empty(1, dtype=np.float32)

    @triton.jit
    def kernel(x_ptr, y_ptr, n_elements, SCALE: tl.constexpr, BLOCK: tl.constexpr):
        offsets = tl.arange(0, BLOCK)
        mask = offsets < n_elements
        val = tl.load(x_ptr + offsets, mask=mask, other=-SCALE)
        result = tl.reduce(val, axis=0, combine_fn=lambda a, b: a + b + SCALE)
        tl.store(y_ptr, result)

    kernel[(1, )](x, y, x.size, SCALE=2.0, BLOCK=4)

    np.testing.assert_allclose(y, np.array([10.0], np.float32), rtol=1e-3, atol=1e-5)


def test_lambda_tensor_capture_is_rejected(device):
    x = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    y = np.empty_like(x)

    @triton.jit
    def kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
        offsets = tl.arange(0, BLOCK)
        mask = offsets < n_elements
        val = tl.load(x_ptr + offsets, mask=mask, other=0.0)
        result = tl.associative_scan(val, axis=0, combine_fn=lambda a, b: a + b + val)
        tl.store(y_ptr + offsets, result, mask=mask)

    with pytest.raises(UnsupportedLanguageConstruct, match="lambda can only capture constexpr values"):
        kernel[(1, )](x, y, x.size, BLOCK=4)


def test_lambda_runtime_scalar_capture_is_rejected(device):
    x = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    y = np.empty_like(x)

    @triton.jit
    def kernel(x_ptr, y_ptr, n_elements, runtime_scale, BLOCK: tl.constexpr):
        offsets = tl.arange(0, BLOCK)
        mask = offsets < n_elements
        val = tl.load(x_ptr + offsets, mask=mask, other=0.0)
        result = tl.associative_scan(val, axis=0, combine_fn=lambda a, b: a + b + runtime_scale)
        tl.store(y_ptr + offsets, result, mask=mask)

    with pytest.raises(UnsupportedLanguageConstruct, match="lambda can only capture constexpr values"):
        kernel[(1, )](x, y, x.size, x.sum(), BLOCK=4)
