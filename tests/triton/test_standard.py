"""Triton's python/test/unit/language/test_standard.py, ported to minitriton: maximum/minimum,
sort, flip, ravel, swizzle2d, topk.

Source: triton-lang/triton (MIT licence); the stored copy read is at commit
062331be38169e5620b7e9fa2fd84d4e478fb084 (test_core.py's commit holds the same kernels).
Kernels unchanged; host code ours on numpy, where Triton's uses torch.sort / flip / topk.
That copy's test_topk unpacks (values, indices) from tl.topk and compares each expected array
with itself; Triton's tl.topk returns the values only (`topk(x, k, dim=None, descending=True)`),
so here its kernel stores those values and they are checked against numpy.
"""
import numpy as np
import pytest

import minitriton as triton                 # was: import triton
import minitriton.language as tl            # was: import triton.language as tl

from .helpers import check_type_supported, float_dtypes, int_dtypes, numpy_random, uint_dtypes
from .test_core import run_binary            # was: from test_core import _test_binary


@pytest.mark.parametrize("dtype", int_dtypes + uint_dtypes + float_dtypes + ["bfloat16"])
@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_maximum_minium(dtype, op, device):
    expr = f'tl.{op}(x, y)'
    numpy_expr = f'np.{op}(x, y)'
    run_binary(dtype, dtype, expr, numpy_expr, device=device)


@pytest.mark.parametrize("M, N", [[1, 512], [8, 64], [256, 16], [512, 8]])
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dtype_str", ['int32', 'float16', 'float32', 'bfloat16'])
def test_sort(M, N, descending, dtype_str, device):
    check_type_supported(dtype_str, device)

    @triton.jit
    def sort_kernel(X, Z, N: tl.constexpr, M: tl.constexpr, descending: tl.constexpr):
        offx = tl.arange(0, M)
        offy = tl.arange(0, N) * M
        off2d = offx[None, :] + offy[:, None]
        x = tl.load(X + off2d)
        x = tl.sort(x, descending=descending)
        tl.store(Z + off2d, x)

    x = numpy_random((N, M), dtype_str=dtype_str)
    y = np.sort(x, axis=1)
    if descending:
        y = np.flip(y, axis=1)
    z = np.empty_like(x)
    sort_kernel[(1, )](x, z, N, M, descending, num_warps=8)
    assert (y == z).all(), (y, z)


@pytest.mark.parametrize("M, N", [[1, 512], [8, 64], [256, 16], [512, 8]])
@pytest.mark.parametrize("dtype_str", ['int32', 'float16', 'float32', 'bfloat16'])
def test_flip(M, N, dtype_str, device):
    check_type_supported(dtype_str, device)

    @triton.jit
    def flip_kernel(X, Z, N: tl.constexpr, M: tl.constexpr):
        offx = tl.arange(0, M)
        offy = tl.arange(0, N) * M
        off2d = offx[None, :] + offy[:, None]
        x = tl.load(X + off2d)
        x = tl.flip(x)
        tl.store(Z + off2d, x)

    x = numpy_random((N, M), dtype_str=dtype_str)
    y = np.flip(x, (1, ))
    z = np.empty_like(x)
    flip_kernel[(1, )](x, z, N, M, num_warps=8)
    assert (y == z).all(), (y, z)


def test_flip_inf(device):
    # Reproducer for https://github.com/triton-lang/triton/issues/5439

    @triton.jit
    def triton_flip_kernel(out_ptr, x_ptr, N: tl.constexpr):
        pid = tl.program_id(0)
        x = tl.load(x_ptr + pid * N + tl.arange(0, N))
        shape: tl.constexpr = (N // 2, 2)
        y = x.reshape(shape)
        y = tl.flip(y, dim=1).reshape(x.shape)
        tl.store(out_ptr + pid * N + tl.arange(0, N), y)

    x = np.arange(0, 16, dtype=np.float32)[None, :]
    x[:, -1] = float('inf')

    expect = np.flip(x.reshape(-1, 8, 2), -1).reshape(-1, 16)
    actual = np.empty_like(x)
    triton_flip_kernel[(x.shape[0], )](actual, x, x.shape[1])

    np.testing.assert_equal(expect, actual)


def test_ravel(device):

    @triton.jit
    def triton_ravel(out_ptr):
        a = tl.arange(0, 256)
        a = tl.reshape(a, (32, 8))
        a = tl.ravel(a)
        tl.store(out_ptr + tl.arange(0, 256), a)

    out = np.empty((256, ), dtype=np.int32)
    triton_ravel[(1, )](out)

    assert (out == np.arange(0, 256)).all()


@pytest.mark.parametrize("size_i, size_j, size_g", [[5, 7, 3]])
def test_swizzle2d(size_i, size_j, size_g, device):

    @triton.jit
    def swizzle2d_kernel(output, size_i, size_j, size_g):
        for i in tl.range(0, size_i, 1):
            for j in tl.range(0, size_j, 1):
                new_i, new_j = tl.swizzle2d(i, j, size_i, size_j, size_g)
                tl.store(output + new_i * size_j + new_j, i * size_j + j)

    output = np.zeros((size_i, size_j), np.float32)
    swizzle2d_kernel[(1, )](output, size_i, size_j, size_g)
    expected_order = np.array([[0, 3, 6, 9, 12, 15, 18], [1, 4, 7, 10, 13, 16, 19], [2, 5, 8, 11, 14, 17, 20],
                               [21, 23, 25, 27, 29, 31, 33], [22, 24, 26, 28, 30, 32, 34]])
    assert (output == expected_order).all(), (output, expected_order)


# Triton: k in 1, 4, 10, 100, 512 (clipped to M); tl.topk needs k a power of two, so 10 and
# 100 are left out here
@pytest.mark.parametrize("M, N", [[1, 512], [8, 64], [256, 16], [512, 8]])
@pytest.mark.parametrize("k", [1, 4, 512])
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dtype_str", ['int32', 'float16', 'float32', 'bfloat16'])
def test_topk(M, N, k, descending, dtype_str, device):
    check_type_supported(dtype_str, device)
    k = min(k, M)

    @triton.jit
    def topk_kernel(X, Z, N: tl.constexpr, M: tl.constexpr, k: tl.constexpr, descending: tl.constexpr):
        offx = tl.arange(0, M)
        offy = tl.arange(0, N) * M
        off2d = offx[None, :] + offy[:, None]
        x = tl.load(X + off2d)
        z = tl.topk(x, k=k, descending=descending)
        offz = tl.arange(0, k)[None, :] + tl.arange(0, N)[:, None] * k
        tl.store(Z + offz, z)

    x = numpy_random((N, M), dtype_str=dtype_str)
    ordered = np.sort(x, axis=1)
    expected = np.flip(ordered, axis=1)[:, :k] if descending else ordered[:, :k]
    z = np.zeros((N, k), dtype=x.dtype)
    topk_kernel[(1, )](x, z, N, M, k, descending, num_warps=8)
    np.testing.assert_equal(expected, z)
