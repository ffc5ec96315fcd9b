"""Triton's python/test/unit/language/test_random.py, ported to minitriton: `tl.randint` against
a reference Philox stream, `tl.rand` / `tl.randn` by their distribution, the seed's type, and
`uint_to_uniform_float` at the integer limits.

Source: triton-lang/triton (MIT licence), the stored copy at commit
431cb45ec42a508f6cc9b3975dc09e018780b788 (its test_randint checks 64-bit offsets against
Philox-4x64).  Kernels unchanged; the host code is ours on numpy: the reference stream is our
own Philox written on Python integers (Triton's test has a numpy class of its own), torch's
tensors are numpy arrays, `torch.iinfo` is `np.iinfo`.  Parametrizations as Triton's.
"""
import numpy as np
import pytest
import scipy.stats

import minitriton as triton                 # was: import triton
import minitriton.language as tl            # was: import triton.language as tl

# Philox-4xW-10 (Salmon et al., SC 2011): Weyl key increments and round multipliers per word size
PHILOX = {32: (0x9E3779B9, 0xBB67AE85, 0xD2511F53, 0xCD9E8D57),
          64: (0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B, 0xD2E7470EE14C6C93, 0xCA5A826395121157)}


def philox_first_word(seed: int, offset: int, bits: int) -> int:
    """The first of the four words Triton's `randint(seed, offset)` draws: the seed split into
    words (key low, key high, then the counter's upper half), the offset in the counter's first."""
    mask = (1 << bits) - 1
    words = [(seed >> (bits * i)) & mask for i in range(4)]
    assert seed >> (4 * bits) == 0
    k0, k1 = words[0], words[1]
    c = [offset & mask, 0, words[2], words[3]]
    key_a, key_b, round_a, round_b = PHILOX[bits]
    for _ in range(10):
        p0, p2 = round_a * c[0], round_b * c[2]
        c = [(p2 >> bits) ^ c[1] ^ k0, p2 & mask, (p0 >> bits) ^ c[3] ^ k1, p0 & mask]
        k0, k1 = (k0 + key_a) & mask, (k1 + key_b) & mask
    return c[0]


BLOCK = tl.constexpr(1024)


@pytest.mark.parametrize('size, seed, dtype, const_seed', [(size, seed, dtype, const_seed)
                                                           for size in ['10', '4,53', '400']
                                                           for seed in [0, 42, 124, 54, 0xffffffff, 0x0000000fcafeb0ba]
                                                           for dtype in ['int32', 'int64']
                                                           for const_seed in [True, False]])
def test_randint(size, seed, device, dtype, const_seed):
    size = list(map(int, size.split(',')))
    numpy_dtype = getattr(np, f"u{dtype}")
    bits = {'int32': 32, 'int64': 64}[dtype]

    @triton.jit
    def kernel(X, N, seed):
        pid = tl.program_id(0).to(X.dtype.element_ty)
        offset = pid * BLOCK + tl.arange(0, BLOCK)
        rand = tl.randint(seed, offset)
        tl.store(X + offset, rand, mask=offset < N)

    @triton.jit
    def const_kernel(X, N, seed: tl.constexpr):
        pid = tl.program_id(0).to(X.dtype.element_ty)
        offset = pid * BLOCK + tl.arange(0, BLOCK)
        rand = tl.randint(seed, offset)
        tl.store(X + offset, rand, mask=offset < N)

    x = np.empty(size, dtype=getattr(np, dtype))
    N = x.size
    grid = (triton.cdiv(N, BLOCK.value), )
    if const_seed:
        const_kernel[grid](x, N, seed=seed)
    else:
        kernel[grid](x, N, seed)
    out_tri = x.astype(numpy_dtype).flatten().tolist()
    out_ref = [philox_first_word(seed, i, bits) for i in range(N)]
    assert out_tri == out_ref


@pytest.mark.parametrize('size, seed, dtype, const_seed', [(size, seed, dtype, const_seed)
                                                           for size in [100000]
                                                           for seed in [0, 42, 124, 54]
                                                           for dtype in ['int32', 'int64']
                                                           for const_seed in [True, False]])
def test_rand(size, seed, dtype, device, const_seed):

    @triton.jit
    def kernel(X, N, seed, dtype: tl.constexpr):
        pid = tl.program_id(0).to(dtype)
        offset = pid * BLOCK + tl.arange(0, BLOCK)
        rand = tl.rand(seed, offset)
        tl.store(X + offset, rand, mask=offset < N)

    @triton.jit
    def const_kernel(X, N, seed: tl.constexpr, dtype: tl.constexpr):
        pid = tl.program_id(0).to(dtype)
        offset = pid * BLOCK + tl.arange(0, BLOCK)
        rand = tl.rand(seed, offset)
        tl.store(X + offset, rand, mask=offset < N)

    x = np.empty(size, dtype=np.float32)
    N = x.size
    grid = (triton.cdiv(N, BLOCK.value), )
    if const_seed:
        const_kernel[grid](x, N, seed=seed, dtype=getattr(tl, dtype))
    else:
        kernel[grid](x, N, seed, dtype=getattr(tl, dtype))
    assert all((x >= 0) & (x <= 1))
    assert scipy.stats.kstest(x.tolist(), 'uniform', args=(0, 1)).statistic < 0.01


def test_seed_is_int(device):

    @triton.jit
    def kernel(X, seed):
        offset = tl.arange(0, 1)
        rand = tl.rand(seed, offset)
        tl.store(X + offset, rand)

    x = np.empty(1, dtype=np.float32)
    with pytest.raises(triton.compiler.errors.CompilationError):
        seed0 = np.zeros(1, dtype=np.int32)
        kernel[(1, )](x, seed0)
    with pytest.raises(triton.compiler.errors.CompilationError):
        seed1 = 2.3
        kernel[(1, )](x, seed1)


@pytest.mark.parametrize('size, seed, dtype, const_seed', [(size, seed, dtype, const_seed)
                                                           for size in [100000]
                                                           for seed in [0, 42, 124, 54]
                                                           for dtype in ['int32', 'int64']
                                                           for const_seed in [True, False]])
def test_randn(size, seed, dtype, device, const_seed):

    @triton.jit
    def kernel(X, N, seed, dtype: tl.constexpr):
        pid = tl.program_id(0).to(dtype)
        offset = pid * BLOCK + tl.arange(0, BLOCK)
        rand = tl.randn(seed, offset)
        tl.store(X + offset, rand, mask=offset < N)

    @triton.jit
    def const_kernel(X, N, seed: tl.constexpr, dtype: tl.constexpr):
        pid = tl.program_id(0).to(dtype)
        offset = pid * BLOCK + tl.arange(0, BLOCK)
        rand = tl.randn(seed, offset)
        tl.store(X + offset, rand, mask=offset < N)

    x = np.empty(size, dtype=np.float32)
    N = x.size
    grid = (triton.cdiv(N, BLOCK.value), )
    if const_seed:
        const_kernel[grid](x, N, seed=seed, dtype=getattr(tl, dtype))
    else:
        kernel[grid](x, N, seed, dtype=getattr(tl, dtype))
    assert abs(x.mean()) < 1e-2
    assert abs(x.std() - 1) < 1e-2


@pytest.mark.parametrize('dtype', ['int32', 'int64'])
def test_rand_limits(dtype, device):

    @triton.jit
    def kernel(input, output, n: tl.constexpr):
        idx = tl.arange(0, n)
        x = tl.load(input + idx)
        y = tl.random.uint_to_uniform_float(x)
        tl.store(output + idx, y)

    info = np.iinfo(getattr(np, dtype))
    min_max_int = np.array([info.min, info.max], dtype=getattr(np, dtype))
    output = np.empty(2, dtype=np.float32)
    kernel[(1, )](min_max_int, output, 2)

    assert output[0] == output[1]
    assert 1.0 - np.finfo(np.float32).eps <= output[0].item() < 1.0
