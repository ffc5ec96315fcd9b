"""Triton's python/test/unit/language/test_transpose.py, ported to minitriton: a block stored
through pointers whose strides are swapped (the layout conversion Triton's compiler must get
right), at five shapes and warp counts.

Source: triton-lang/triton (MIT licence), the stored copy at commit
7dd9270385cadbdf9d47713cb7360dc1464a6acf.  Kernel unchanged; host code ours on numpy
(torch.randn -> numpy's standard_normal, torch.t -> .T, assert_close -> numpy's).
"""
import numpy as np
import pytest

import minitriton as triton                 # was: import triton
import minitriton.language as tl            # was: import triton.language as tl


@triton.jit
def kernel(x_ptr, stride_xm,
           z_ptr, stride_zn,
           SIZE_M: tl.constexpr, SIZE_N: tl.constexpr):
    off_m = tl.arange(0, SIZE_M)
    off_n = tl.arange(0, SIZE_N)
    Xs = x_ptr + off_m[:, None] * stride_xm + off_n[None, :] * 1
    Zs = z_ptr + off_m[:, None] * 1 + off_n[None, :] * stride_zn
    tl.store(Zs, tl.load(Xs))


@pytest.mark.parametrize('NUM_WARPS,SIZE_M,SIZE_N', [
    [1, 16, 16],
    [1, 32, 32],
    [1, 32, 64],
    [2, 64, 128],
    [2, 128, 64]
])
def test_convert_layout_impl(NUM_WARPS, SIZE_M, SIZE_N):
    grid = lambda META: (1, )
    x = np.random.default_rng(SIZE_M * SIZE_N).standard_normal((SIZE_M, SIZE_N)).astype(np.float32)
    z = np.empty((SIZE_N, SIZE_M), dtype=x.dtype)
    kernel[grid](x_ptr=x, stride_xm=x.strides[0] // x.itemsize, z_ptr=z, stride_zn=z.strides[0] // z.itemsize,
                 SIZE_M=SIZE_M, SIZE_N=SIZE_N, num_warps=NUM_WARPS)
    golden_z = x.T
    np.testing.assert_allclose(z, golden_z, rtol=1e-7, atol=1e-7)
