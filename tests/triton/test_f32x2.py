"""Triton's test_f32x2.py (python/test/unit/language/), which Triton runs on Blackwell (sm_100)
only: `tl.math`'s packed fp32 pair arithmetic, per element.

Source: triton-lang/triton at commit 345e611d29b16ea7627f47588004d520c68c4f21 (MIT licence).
Kernel unchanged; host code ours on numpy (the Blackwell skip dropped: the arithmetic runs here).
"""
import numpy as np

import minitriton as triton                 # was: import triton
import minitriton.language as tl            # was: import triton.language as tl


@triton.jit
def _f32x2_kernel(a_ptr, b_ptr, c_ptr, out_mul, out_add, out_sub, out_fma, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    c = tl.load(c_ptr + offs)
    tl.store(out_mul + offs, tl.math.mul_f32x2(a, b))
    tl.store(out_add + offs, tl.math.add_f32x2(a, b))
    tl.store(out_sub + offs, tl.math.sub_f32x2(a, b))
    tl.store(out_fma + offs, tl.math.fma_f32x2(a, b, c))


def test_f32x2():
    N = 256
    rng = np.random.default_rng(0)
    a = rng.standard_normal(N).astype(np.float32)
    b = rng.standard_normal(N).astype(np.float32)
    c = rng.standard_normal(N).astype(np.float32)
    out_mul = np.empty_like(a)
    out_add = np.empty_like(a)
    out_sub = np.empty_like(a)
    out_fma = np.empty_like(a)
    _f32x2_kernel[(1, )](a, b, c, out_mul, out_add, out_sub, out_fma, N)
    np.testing.assert_allclose(out_mul, a * b, rtol=1.3e-6, atol=1e-5)
    np.testing.assert_allclose(out_add, a + b, rtol=1.3e-6, atol=1e-5)
    np.testing.assert_allclose(out_sub, a - b, rtol=1.3e-6, atol=1e-5)
    np.testing.assert_allclose(out_fma, a * b + c, rtol=1.3e-6, atol=1e-5)
