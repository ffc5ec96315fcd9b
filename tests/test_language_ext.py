"""The rest of Triton's language: user combine functions, scans, sorting, joins, histograms,
Philox random numbers, fp8, block pointers, tensor methods.  The cases follow Triton's own
unit tests (test_core.py, test_standard.py, test_random.py) in our own code: each kernel runs
in lockstep and one program at a time, and both must give numpy's (or Triton's) answer."""
import numpy as np
import pytest
from scipy import special

import minitriton as mt
import minitriton.language as tl
import minitriton.language.core as core
from minitriton.language.extra import libdevice
from minitriton.language.standard import _log2, sum as _std_sum, zeros_like
from tests.test_semantics import both


# ---------------------------------------------------------------- combine functions
@mt.jit
def _add(a, b):
    return a + b


@mt.jit
def _argmax_first(v1, i1, v2, i2):
    take_left = (v1 > v2) | ((v1 == v2) & (i1 < i2))
    return tl.where(take_left, v1, v2), tl.where(take_left, i1, i2)


@mt.jit
def _recurrence(a1, b1, a2, b2):
    """Composition of y -> a*y + b maps: associative, not commutative."""
    return a1 * a2, b1 * a2 + b2


@mt.jit
def reduce_kernel(x_ptr, sum_ptr, arg_ptr, all_ptr, keep_ptr, R: tl.constexpr, C: tl.constexpr):
    pid = tl.program_id(0)
    r, c = tl.arange(0, R), tl.arange(0, C)
    x = tl.load(x_ptr + pid * R * C + r[:, None] * C + c[None, :])
    tl.store(sum_ptr + pid * C + c, tl.reduce(x, 0, _add))
    _, idx = tl.reduce((x, tl.broadcast_to(c[None, :], (R, C))), 1, _argmax_first)
    tl.store(arg_ptr + pid * R + r, idx)
    tl.store(all_ptr + pid, tl.reduce(x, None, _add))
    k = tl.reduce(x, None, _add, keep_dims=True)
    tl.static_assert(k.shape == [1, 1])
    tl.store(keep_ptr + pid + tl.arange(0, 1)[:, None], k)


def test_reduce_with_a_user_combine_function():
    rng = np.random.default_rng(0)
    x = rng.integers(-3, 4, (3, 8, 16)).astype(np.int32)  # many ties: the first index must win

    def run():
        s, a = np.zeros((3, 16), np.int32), np.zeros((3, 8), np.int32)
        t, k = np.zeros(3, np.int32), np.zeros(3, np.int32)
        reduce_kernel[(3,)](x, s, a, t, k, R=8, C=16)
        return s, a, t, k
    for s, a, t, k in both(run):
        np.testing.assert_array_equal(s, x.sum(1))
        np.testing.assert_array_equal(a, x.argmax(2))
        np.testing.assert_array_equal(t, x.sum((1, 2)))
        np.testing.assert_array_equal(k, x.sum((1, 2)))


@mt.jit
def scan_kernel(a_ptr, b_ptr, y_ptr, rev_ptr, prod_ptr, N: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * N + tl.arange(0, N)
    a, b = tl.load(a_ptr + offs), tl.load(b_ptr + offs)
    _, y = tl.associative_scan((a, b), 0, _recurrence)
    tl.store(y_ptr + offs, y)
    tl.store(rev_ptr + offs, tl.associative_scan(b, 0, _add, reverse=True))
    tl.store(prod_ptr + offs, a.cumprod(0))


def test_associative_scan_keeps_operand_order_and_reverses():
    rng = np.random.default_rng(1)
    a = rng.uniform(0.5, 1.0, (2, 32)).astype(np.float32)
    b = rng.standard_normal((2, 32)).astype(np.float32)
    want = np.zeros_like(b)
    for p in range(2):
        y = np.float32(0)
        for i in range(32):
            y = a[p, i] * y + b[p, i]
            want[p, i] = y

    def run():
        y, rev, prod = np.zeros_like(b), np.zeros_like(b), np.zeros_like(b)
        scan_kernel[(2,)](a, b, y, rev, prod, N=32)
        return y, rev, prod
    for y, rev, prod in both(run):
        np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(rev, np.flip(np.cumsum(np.flip(b, 1), 1), 1), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(prod, np.cumprod(a, 1), rtol=1e-5)


def test_cumprod_of_small_ints_wraps_in_their_type():
    @mt.jit
    def k(x_ptr, y_ptr, N: tl.constexpr):
        offs = tl.arange(0, N)
        tl.store(y_ptr + offs, tl.cumprod(tl.load(x_ptr + offs), 0))
    x = np.full(8, 3, np.int8)
    y = np.zeros(8, np.int8)
    k[(1,)](x, y, N=8)
    np.testing.assert_array_equal(y, np.cumprod(x.astype(np.int64)).astype(np.int8))


# ---------------------------------------------------------------- rearranging blocks
@mt.jit
def rearrange_kernel(x_ptr, asc_ptr, desc_ptr, top_ptr, flip0_ptr, flip1_ptr, g_ptr, R: tl.constexpr, C: tl.constexpr):
    pid = tl.program_id(0)
    r, c = tl.arange(0, R), tl.arange(0, C)
    grid = pid * R * C + r[:, None] * C + c[None, :]
    x = tl.load(x_ptr + grid)
    tl.store(asc_ptr + grid, tl.sort(x))
    tl.store(desc_ptr + grid, x.sort(descending=True))
    tl.store(top_ptr + pid * R * 4 + r[:, None] * 4 + tl.arange(0, 4)[None, :], tl.topk(x, 4))
    tl.store(flip0_ptr + grid, tl.flip(x, 0))
    tl.store(flip1_ptr + grid, x.flip())
    rev = (C - 1 - c)[None, :] + r[:, None] * 0
    tl.store(g_ptr + grid, tl.gather(x, rev, 1))


def test_sort_topk_flip_gather():
    x = np.random.default_rng(2).standard_normal((2, 4, 16)).astype(np.float32)

    def run():
        outs = [np.zeros_like(x) for _ in range(5)]
        top = np.zeros((2, 4, 4), np.float32)
        rearrange_kernel[(2,)](x, outs[0], outs[1], top, outs[2], outs[3], outs[4], R=4, C=16)
        return outs, top
    for (asc, desc, f0, f1, g), top in both(run):
        np.testing.assert_array_equal(asc, np.sort(x, -1))
        np.testing.assert_array_equal(desc, np.sort(x, -1)[..., ::-1])
        np.testing.assert_array_equal(top, np.sort(x, -1)[..., ::-1][..., :4])
        np.testing.assert_array_equal(f0, x[:, ::-1, :])
        np.testing.assert_array_equal(f1, x[:, :, ::-1])
        np.testing.assert_array_equal(g, x[:, :, ::-1])


@mt.jit
def pairs_kernel(a_ptr, b_ptr, inter_ptr, lo_ptr, hi_ptr, cat_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a, b = tl.load(a_ptr + offs), tl.load(b_ptr + offs)
    tl.store(inter_ptr + tl.arange(0, 2 * N), tl.interleave(a, b))
    j = tl.join(a, b)
    tl.static_assert(j.shape == [N, 2])
    lo, hi = j.split()
    tl.store(lo_ptr + offs, lo)
    tl.store(hi_ptr + offs, hi)
    tl.store(cat_ptr + tl.arange(0, 2 * N), tl.cat(a, b, can_reorder=True))


def test_join_split_interleave_cat():
    a, b = np.arange(8, dtype=np.int32), np.arange(8, dtype=np.int32) * 10
    inter, lo, hi, cat = np.zeros(16, np.int32), np.zeros(8, np.int32), np.zeros(8, np.int32), np.zeros(16, np.int32)
    pairs_kernel[(1,)](a, b, inter, lo, hi, cat, N=8)
    np.testing.assert_array_equal(inter, np.stack([a, b], 1).reshape(-1))
    np.testing.assert_array_equal(lo, a)
    np.testing.assert_array_equal(hi, b)
    np.testing.assert_array_equal(np.sort(cat), np.sort(np.concatenate([a, b])))


def test_cat_without_reordering_joins_in_order_along_a_dim_as_triton_3_7_does():
    """Triton refused `tl.cat(x, y)` (can_reorder=False) until 3.7, which joins in order along
    `dim`, the blocks broadcast to one shape; blocks of different shapes are refused (3.9)."""
    @mt.jit
    def k(a_ptr, out_ptr, N: tl.constexpr, DIM: tl.constexpr):
        r = tl.arange(0, N)
        x = tl.load(a_ptr + r[:, None] * N + r[None, :])
        y = tl.load(a_ptr + r[None, :])                     # [1, N]: broadcast to [N, N]
        z = tl.cat(x, y, dim=DIM)
        tl.store(out_ptr + tl.arange(0, 2 * N * N), tl.reshape(z, (2 * N * N,)))

    @mt.jit
    def mismatched(a_ptr, N: tl.constexpr):
        x = tl.load(a_ptr + tl.arange(0, N))
        tl.store(a_ptr + tl.arange(0, 2 * N), tl.cat(x, tl.load(a_ptr + tl.arange(0, 2 * N)), can_reorder=True))

    a = np.arange(16, dtype=np.float32)
    for dim in (0, 1, -1):
        out = np.zeros(32, np.float32)
        k[(1,)](a, out, N=4, DIM=dim)
        x = a.reshape(4, 4)
        np.testing.assert_array_equal(out.reshape((8, 4) if dim == 0 else (4, 8)),
                                      np.concatenate([x, np.broadcast_to(x[:1], (4, 4))], axis=dim))
    with pytest.raises(ValueError, match="dim must be an axis"):
        k[(1,)](a, np.zeros(32, np.float32), N=4, DIM=2)
    with pytest.raises(ValueError, match="the same shape"):
        mismatched[(1,)](np.zeros(16, np.float32), N=4)


@mt.jit
def histogram_kernel(x_ptr, h_ptr, n, N: tl.constexpr, BINS: tl.constexpr):
    offs = tl.arange(0, N)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=-1)
    tl.store(h_ptr + tl.program_id(0) * BINS + tl.arange(0, BINS), tl.histogram(x, BINS, mask=m))


def test_histogram_counts_masked_values_only_and_out_of_range_ones_by_their_low_bits():
    x = np.random.default_rng(3).integers(0, 16, 100).astype(np.int32)

    def run():
        h = np.zeros((2, 16), np.int32)
        histogram_kernel[(2,)](x, h, 100, N=128, BINS=16)
        return h
    for h in both(run):
        np.testing.assert_array_equal(h, np.tile(np.bincount(x, minlength=16), (2, 1)))
    # 8 bins padded to a warp's 32: a value counts in bin (value mod 32) when that is below 8
    h = np.zeros(8, np.int32)
    histogram_kernel[(1,)](x, h, 100, N=128, BINS=8)
    np.testing.assert_array_equal(h, np.bincount(x[x % 32 < 8] % 32, minlength=8))
    y = np.array([1, 33, -31, 40, 5, -1], np.int32)      # -31 is 1 and 40 is 8 modulo 32; -1 is 31
    histogram_kernel[(1,)](y, h, 6, N=8, BINS=8)
    np.testing.assert_array_equal(h, [0, 3, 0, 0, 0, 1, 0, 0])
    one = np.zeros(2, np.int32)
    histogram_kernel[(1,)](np.ones(1, np.int32), one, 1, N=1, BINS=1)   # Triton's silent-corruption test
    assert one.tolist() == [0, 0]


# ---------------------------------------------------------------- integer and float math
@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64])
def test_umulhi_is_the_high_half_of_the_unsigned_product(dtype):
    @mt.jit
    def k(x_ptr, y_ptr, z_ptr, N: tl.constexpr):
        offs = tl.arange(0, N)
        tl.store(z_ptr + offs, tl.umulhi(tl.load(x_ptr + offs), tl.load(y_ptr + offs)))
    info = np.iinfo(dtype)
    rng = np.random.default_rng(4)
    x = rng.integers(info.min, info.max, 64, dtype=dtype, endpoint=True)
    y = rng.integers(info.min, info.max, 64, dtype=dtype, endpoint=True)
    x[:2], y[:2] = info.max, info.min
    z = np.zeros_like(x)
    k[(1,)](x, y, z, N=64)
    bits = 8 * np.dtype(dtype).itemsize
    mask = (1 << bits) - 1
    want = [((int(a) & mask) * (int(b) & mask)) >> bits for a, b in zip(x, y)]
    np.testing.assert_array_equal(z.view(f"u{bits // 8}"), np.array(want, f"u{bits // 8}"))


def test_fdiv_div_rn_sqrt_rn_are_ieee():
    @mt.jit
    def k(x_ptr, y_ptr, a_ptr, b_ptr, c_ptr, N: tl.constexpr):
        offs = tl.arange(0, N)
        x, y = tl.load(x_ptr + offs), tl.load(y_ptr + offs)
        tl.store(a_ptr + offs, tl.math.fdiv(x, y))
        tl.store(b_ptr + offs, tl.math.div_rn(x, y))
        tl.store(c_ptr + offs, tl.math.sqrt_rn(x))
    rng = np.random.default_rng(5)
    x, y = rng.uniform(0, 100, 64).astype(np.float32), rng.uniform(1, 3, 64).astype(np.float32)
    a, b, c = (np.zeros(64, np.float32) for _ in range(3))
    k[(1,)](x, y, a, b, c, N=64)
    np.testing.assert_array_equal(a, x / y)
    np.testing.assert_array_equal(b, x / y)
    np.testing.assert_array_equal(c, np.sqrt(x))


# ---------------------------------------------------------------- random numbers
@mt.jit
def philox_kernel(c_ptr, out_ptr, seed):
    i = tl.arange(0, 4)
    cs = [tl.load(c_ptr + j + i * 0) for j in tl.static_range(4)]
    a, b, c, d = tl.philox(seed, cs[0], cs[1], cs[2], cs[3])
    tl.store(out_ptr + i * 4 + 0, a)
    tl.store(out_ptr + i * 4 + 1, b)
    tl.store(out_ptr + i * 4 + 2, c)
    tl.store(out_ptr + i * 4 + 3, d)


# Random123's known-answer vectors for Philox4x32-10 (kat_vectors): counter, key, output
KAT = [((0, 0, 0, 0), (0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
       ((0xffffffff,) * 4, (0xffffffff,) * 2, (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
       ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344), (0xa4093822, 0x299f31d0),
        (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1))]


@pytest.mark.parametrize("counter,key,want", KAT)
def test_philox_matches_random123_known_answers(counter, key, want):
    out = np.zeros(16, np.uint32)
    philox_kernel[(1,)](np.array(counter, np.uint32), out, np.uint64(key[0] | key[1] << 32))
    np.testing.assert_array_equal(out.reshape(4, 4), np.tile(np.array(want, np.uint32), (4, 1)))


@mt.jit
def random_kernel(i_ptr, u_ptr, n_ptr, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(i_ptr + offs, tl.randint(seed, offs))
    tl.store(u_ptr + offs, tl.rand(seed, offs))
    tl.store(n_ptr + offs, tl.randn(seed, offs))


def test_rand_and_randn_follow_triton_from_the_same_stream():
    def run():
        i, u, n = np.zeros(4096, np.uint32), np.zeros(4096, np.float32), np.zeros(4096, np.float32)
        random_kernel[(16,)](i, u, n, 1234, BLOCK=256)
        return i, u, n
    (i, u, n), (i2, u2, n2) = both(run)
    np.testing.assert_array_equal(i, i2)
    np.testing.assert_array_equal(u, u2)
    # Triton's conversion: |signed value| (as -x-1 below zero) times 4.6566127342e-10
    s = i.view(np.int32).astype(np.int64)
    want_u = np.where(s < 0, -s - 1, s).astype(np.float32) * np.float32(4.6566127342e-10)
    np.testing.assert_array_equal(u, want_u)
    assert 0 <= u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 0.02
    assert abs(n.mean()) < 0.05 and abs(n.std() - 1) < 0.05
    # a different seed is a different stream; the same (seed, offset) is the same number anywhere
    i3 = np.zeros(4096, np.uint32)
    random_kernel[(16,)](i3, np.zeros(4096, np.float32), np.zeros(4096, np.float32), 1235, BLOCK=256)
    assert (i3 != i).mean() > 0.99
    i4 = np.zeros(4096, np.uint32)
    random_kernel[(4,)](i4, np.zeros(4096, np.float32), np.zeros(4096, np.float32), 1234, BLOCK=1024)
    np.testing.assert_array_equal(i4, i)


@mt.jit
def seeded_per_program(u_ptr, seed, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(u_ptr + offs, tl.rand(seed + pid % 3, offs))


def test_rand_with_a_seed_per_program_draws_each_programs_own_stream():
    # lockstep sees a different key in each row here (the one-seed fast path does not apply)
    def run():
        u = np.zeros(1024, np.float32)
        seeded_per_program[(8,)](u, 77, BLOCK=128)
        return u
    u, u2 = both(run)
    np.testing.assert_array_equal(u, u2)
    for pid in range(8):
        one = np.zeros(1024, np.float32)
        random_kernel[(8,)](np.zeros(1024, np.uint32), one, np.zeros(1024, np.float32), 77 + pid % 3, BLOCK=128)
        np.testing.assert_array_equal(u[pid * 128:(pid + 1) * 128], one[pid * 128:(pid + 1) * 128])


# ---------------------------------------------------------------- fp8
@mt.jit
def convert_kernel(x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs).to(y_ptr.dtype.element_ty))


def test_fp8_rounds_to_nearest_even_and_saturates():
    x = np.array([17.0, 19.0, 0.1, 1e6, -1e30, np.inf, np.nan, 2.0 ** -9], np.float32)
    for dt, top in ((tl.float8e4nv, 448.0), (tl.float8e5, 57344.0)):
        y = mt.reinterpret(np.zeros(8, np.uint8), dt)
        convert_kernel[(1,)](x, y, N=8)
        back = y.astype(np.float32)
        assert back[3] == top and back[4] == -top and back[5] == top and np.isnan(back[6])
        if dt is tl.float8e4nv:
            assert back[0] == 16.0 and back[1] == 20.0  # ties to even (mantissa 3 bits: 16, 18, 20)
        z = np.zeros(8, np.float32)
        convert_kernel[(1,)](y, z, N=8)
        np.testing.assert_array_equal(z[~np.isnan(z)], back[~np.isnan(back)])


def test_fp8_arithmetic_types():
    @mt.jit
    def k(a_ptr, b_ptr, same_ptr, mixed_ptr, N: tl.constexpr):
        offs = tl.arange(0, N)
        a, b = tl.load(a_ptr + offs), tl.load(b_ptr + offs)
        s = a + a
        tl.static_assert(s.dtype == tl.float8e4nv)
        m = a + b
        tl.static_assert(m.dtype == tl.float16)
        tl.store(same_ptr + offs, s)
        tl.store(mixed_ptr + offs, m)
    a = np.array([1.0, 240.0, 0.3, -2.5], np.float32).astype(tl.float8e4nv.np)
    b = np.array([1.0, 2.0, 3.0, 4.0], np.float32).astype(tl.float8e5.np)
    same, mixed = np.zeros(4, tl.float8e4nv.np), np.zeros(4, np.float16)
    k[(1,)](a, b, same, mixed, N=4)
    np.testing.assert_array_equal(same.astype(np.float32),
                                  np.clip(2 * a.astype(np.float32), -448, 448).astype(tl.float8e4nv.np).astype(np.float32))
    np.testing.assert_array_equal(mixed, (a.astype(np.float32) + b.astype(np.float32)).astype(np.float16))

    @mt.jit
    def bad(a_ptr, i_ptr):
        tl.store(a_ptr, tl.load(a_ptr) + tl.load(i_ptr))
    with pytest.raises(TypeError, match="fp8"):
        bad[(1,)](a, np.zeros(1, np.int32))


def test_reinterpret_checks_widths():
    with pytest.raises(ValueError, match="elements are 4 bytes"):
        mt.reinterpret(np.zeros(4, np.float32), tl.float8e5)


# ---------------------------------------------------------------- block pointers
@mt.jit
def block_ptr_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    a_bp = tl.make_block_ptr(a_ptr, (M, K), (K, 1), (pid_m * BM, 0), (BM, BK), (1, 0))
    b_bp = tl.make_block_ptr(b_ptr, (K, N), (N, 1), (0, pid_n * BN), (BK, BN), (1, 0))
    acc = tl.zeros((BM, BN), tl.float32)
    for _ in range(0, K, BK):
        acc += tl.dot(tl.load(a_bp, boundary_check=(0, 1), padding_option="zero"),
                      tl.load(b_bp, boundary_check=(0, 1), padding_option="zero"))
        a_bp = tl.advance(a_bp, (0, BK))
        b_bp = b_bp.advance((BK, 0))
    c_bp = tl.make_block_ptr(c_ptr, (M, N), (N, 1), (pid_m * BM, pid_n * BN), (BM, BN), (1, 0))
    tl.store(c_bp, acc, boundary_check=(0, 1))


@pytest.mark.parametrize("shape", [(64, 64, 64), (50, 70, 40)])
def test_block_pointer_matmul_with_ragged_edges(shape):
    M, N, K = shape
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((M, K)).astype(np.float16), rng.standard_normal((K, N)).astype(np.float16)

    def run():
        c = np.full((M, N), -7, np.float32)
        block_ptr_matmul[(mt.cdiv(M, 32), mt.cdiv(N, 32))](a, b, c, M, N, K, BM=32, BN=32, BK=16)
        return c, block_ptr_matmul.last_launch["path"]
    (c1, path), (c2, _) = both(run)
    assert path == "lockstep"
    for c in (c1, c2):
        np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)


def test_block_pointer_nan_padding_and_misuse():
    @mt.jit
    def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        bp = tl.make_block_ptr(x_ptr, (n,), (1,), (0,), (BLOCK,), (0,))
        tl.store(y_ptr + tl.arange(0, BLOCK), tl.load(bp, boundary_check=(0,), padding_option="nan"))
    y = np.zeros(8, np.float32)
    k[(1,)](np.arange(5, dtype=np.float32), y, 5, BLOCK=8)
    np.testing.assert_array_equal(y[:5], np.arange(5))
    assert np.isnan(y[5:]).all()

    @mt.jit
    def masked(x_ptr, BLOCK: tl.constexpr):
        bp = tl.make_block_ptr(x_ptr, (BLOCK,), (1,), (0,), (BLOCK,), (0,))
        tl.load(bp, mask=tl.arange(0, BLOCK) < 2)
    with pytest.raises(ValueError, match="boundary_check"):
        masked[(1,)](np.zeros(8, np.float32), BLOCK=8)


# ---------------------------------------------------------------- tensor methods and helpers
def test_tensor_methods_and_swizzle2d():
    @mt.jit
    def k(x_ptr, s_ptr, b_ptr, i_ptr, j_ptr, R: tl.constexpr, C: tl.constexpr):
        r, c = tl.arange(0, R), tl.arange(0, C)
        x = tl.load(x_ptr + r[:, None] * C + c[None, :])
        tl.store(s_ptr + c, x.sum(axis=0))
        row = x.max(axis=1).expand_dims(1).broadcast_to(R, C).cast(tl.int32)
        tl.store(b_ptr + r[:, None] * C + c[None, :], row)
        i, j = tl.swizzle2d(r[:, None], c[None, :], R, C, 3)
        tl.store(i_ptr + r[:, None] * C + c[None, :], i)
        tl.store(j_ptr + r[:, None] * C + c[None, :], j)
    x = np.random.default_rng(7).uniform(0, 10, (8, 4)).astype(np.float32)
    s, b = np.zeros(4, np.float32), np.zeros((8, 4), np.int32)
    si, sj = np.zeros((8, 4), np.int32), np.zeros((8, 4), np.int32)
    k[(1,)](x, s, b, si, sj, R=8, C=4)
    np.testing.assert_allclose(s, x.sum(0), rtol=1e-6)
    np.testing.assert_array_equal(b, np.broadcast_to(x.max(1).astype(np.int32)[:, None], (8, 4)))
    # swizzle2d reference: groups of 3 rows walked column by column
    want = np.zeros((8, 4, 2), np.int32)
    for i in range(8):
        for j in range(4):
            lin = i * 4 + j
            first = lin // 12 * 3
            rows = min(8 - first, 3)
            want[i, j] = first + lin % 12 % rows, lin % 12 // rows
    np.testing.assert_array_equal(si, want[..., 0])
    np.testing.assert_array_equal(sj, want[..., 1])
    assert sorted(zip(si.ravel(), sj.ravel())) == [(i, j) for i in range(8) for j in range(4)]


# ---------------------------------------------------------------- Triton's names, NaN and reduction types
def test_every_triton_language_name_runs_or_says_it_is_not_supported():
    from minitriton import compat
    supported, refused, broken = compat.coverage()
    assert broken == []
    assert len(supported) + len(refused) == len(compat.TRITON_LANGUAGE)
    for name in refused:
        with pytest.raises(NotImplementedError, match=f"tl.{name} is not supported"):
            getattr(tl, name)


def test_the_newest_names_types_target_and_slices():
    """void, function_type, constexpr_type as Triton's; target_info for the A100 modelled (also
    what runtime.driver reports); tl.slice indexes a block and a tl.tuple as Python's slice."""
    assert tl.dtype("void") is tl.void and tl.void.is_void() and not tl.float32.is_void() and str(tl.void) == "void"
    fn = tl.function_type([tl.int32], [tl.float32, tl.int64])
    assert isinstance(fn, tl.dtype) and fn == tl.function_type([tl.int32], [tl.float32, tl.int64])
    assert fn != tl.function_type([tl.int64], [tl.float32, tl.int64]) and str(fn).startswith("fn (")
    assert tl.function_type([], [tl.pointer_type(tl.float16)]).ret_types == []
    with pytest.raises(TypeError, match="param_types must be a list of types"):
        tl.function_type([tl.int32], 5)
    assert tl.constexpr_type(4) == tl.constexpr_type(tl.constexpr(4)) != tl.constexpr_type(5)
    assert repr(tl.constexpr_type(4)) == "constexpr_type[4]" and len({tl.constexpr_type(4), tl.constexpr_type(4)}) == 1
    target = tl.target_info.current_target()
    assert (target.backend, target.arch, target.warp_size) == ("cuda", 80, 32)
    assert mt.runtime.driver.active.get_current_target() == target

    @mt.jit
    def k(x_ptr, out_ptr, N: tl.constexpr):
        x = tl.load(x_ptr + tl.arange(0, N))
        row = x[None, tl.slice(None, None, None)]          # (1, N), as x[None, :]
        t = tl.tuple((x, x * 2, x * 3))
        a, b = t[tl.slice(1, 3, None)]
        if tl.target_info.cuda_capability_geq(8, 0):       # A100: taken
            a = a + 100
        if tl.target_info.cuda_capability_geq(9, 0) or tl.target_info.is_hip():   # not taken
            a = a * 0
        tl.store(out_ptr + tl.arange(0, N), tl.sum(row, 0) + a + b)
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    k[(1,)](x, out, N=8)
    np.testing.assert_array_equal(out, x + 2 * x + 100 + 3 * x)
    with pytest.raises(Exception, match="unsupported tensor index"):
        mt.jit(lambda x_ptr: tl.load(x_ptr + tl.arange(0, 8))[tl.slice(0, 4, None)])[(1,)](x)


def test_a_constexpr_has_newer_tritons_constexpr_type():
    """Triton's test_frontend / test_tuple checks: a name annotated `tl.constexpr` (even before a
    tuple assignment) and a constexpr member of a tuple argument have `.type` constexpr_type; a
    plain number used as an object is still an int32 tensor."""
    @mt.jit
    def parsed():
        y: tl.constexpr
        x, y = 0, 0
        tl.static_assert(x.dtype == tl.int32)
        tl.static_assert(y.type == tl.constexpr_type(0))
        z: tl.constexpr = 5
        tl.static_assert(z.type != tl.constexpr_type(0))
    parsed.warmup(grid=(1,))

    @mt.jit
    def k(out_ptr, values):
        tl.static_assert(values[1].type == tl.constexpr_type(3))
        tl.store(out_ptr, tl.load(values[0]) + values[1])
    x = np.array([8], np.int32)
    out = np.empty_like(x)
    k[(1,)](out, (x, tl.constexpr(3)))
    assert out[0] == 11
    assert tl.constexpr(7).type == tl.constexpr_type(7)


@pytest.mark.parametrize("literal, tensor_type", [(10, tl.int32), (32.1, tl.float32), ((5, 6, 7), None)])
def test_a_constexpr_parameter_is_a_constexpr(literal, tensor_type):
    """Triton's newer test_constexpr_assignment: a parameter annotated `tl.constexpr` keeps its
    `.value` and `.type` (constexpr_type) as an annotated local does, other attributes are its
    value's; assigned to a plain name it becomes a tensor of the number's type."""
    @mt.jit
    def k(out_ptr, input_literal: tl.constexpr, tensor_type: tl.constexpr, DT: tl.constexpr):
        tl.static_assert(input_literal.type == tl.constexpr_type(input_literal.value))
        assigned_literal: tl.constexpr = input_literal
        tl.static_assert(assigned_literal.type == input_literal.type)
        if tensor_type is not None:
            assigned_variable = input_literal
            tl.static_assert(assigned_variable.type == tensor_type)
        tl.store(out_ptr, DT.primitive_bitwidth)
    out = np.zeros(1, np.int32)
    k[(1,)](out, literal, tensor_type, tl.float16)
    assert out[0] == 16

    @mt.jit
    def rebound(out_ptr, N: tl.constexpr):
        N = N + 1                       # a plain assignment: from here on a tensor, as in Triton
        tl.store(out_ptr, N.to(tl.int32) * 2)
    rebound[(1,)](out, 4)
    assert out[0] == 10


def test_condition_and_async_task_run_in_program_order():
    """`while tl.condition(...)` loops on its condition; `with tl.async_task(...)` regions run in
    program order (a later region sees an earlier one's stores); bad task ids are refused."""
    @mt.jit
    def k(x_ptr, tmp_ptr, out_ptr, n):
        acc = 0.0
        i = 0
        while tl.condition(i < n, disable_licm=True):
            acc += tl.load(x_ptr + i)
            i += 1
        offs = tl.arange(0, 4)
        with tl.async_task([0]):                     # producer
            tl.store(tmp_ptr + offs, tl.load(x_ptr + offs) * 2)
        tl.debug_barrier()
        with tl.async_task([1, 2]):                  # consumer
            tl.store(out_ptr + offs, tl.load(tmp_ptr + offs) + acc)
        with tl.async_task("default", num_regs=232):
            tl.store(out_ptr + 4, i.to(tl.float32))
    x = np.arange(1, 9, dtype=np.float32)
    tmp, out = np.zeros(4, np.float32), np.zeros(5, np.float32)
    k[(1,)](x, tmp, out, 5)
    np.testing.assert_array_equal(out, np.r_[2 * x[:4] + x[:5].sum(), 5])
    wrapped = tl.condition(True, disable_licm=True)
    assert wrapped.condition is True and wrapped.disable_licm
    with pytest.raises(TypeError, match="while loop's condition"):
        bool(wrapped)
    for bad in ([-1], [], [1.5]):
        with pytest.raises(ValueError, match="task ids"):
            tl.async_task(bad)
    with pytest.raises(TypeError, match="unknown keyword"):
        tl.async_task([0], warps=4)


def test_philox_impl_is_philox_with_an_explicit_key():
    @mt.jit
    def k(out_ptr, ref_ptr, seed_lo, seed_hi):
        i = tl.arange(0, 8).to(tl.uint32)
        z = i * 0
        a, _, _, _ = tl.philox_impl(i, z, z, z, seed_lo, seed_hi)
        b, _, _, _ = tl.philox(seed_lo.to(tl.uint64) | (seed_hi.to(tl.uint64) << 32), i, z, z, z)
        tl.store(out_ptr + tl.arange(0, 8), a)
        tl.store(ref_ptr + tl.arange(0, 8), b)
    out, ref = np.zeros(8, np.uint32), np.zeros(8, np.uint32)
    k[(1,)](out, ref, np.uint32(0xa4093822), np.uint32(0x299f31d0))
    np.testing.assert_array_equal(out, ref)
    assert len(set(out.tolist())) == 8


def test_nan_handling_and_result_types_of_max_and_min():
    @mt.jit
    def k(x_ptr, y_ptr, num_ptr, all_ptr, red_ptr, N: tl.constexpr):
        offs = tl.arange(0, N)
        x, y = tl.load(x_ptr + offs), tl.load(y_ptr + offs)
        tl.store(num_ptr + offs, tl.maximum(x, y))                                   # NaN ignored
        tl.store(all_ptr + offs, tl.minimum(x, y, propagate_nan=tl.PropagateNan.ALL))  # NaN kept
        m = tl.max(x, axis=0)
        tl.static_assert(m.dtype == tl.float32)                                      # fp16 reduces in fp32
        tl.store(red_ptr, m)
    x = np.array([1, np.nan, 3, np.nan], np.float16)
    y = np.array([2, 5, np.nan, np.nan], np.float16)
    num, al, red = np.zeros(4, np.float16), np.zeros(4, np.float16), np.zeros(1, np.float32)
    k[(1,)](x, y, num, al, red, N=4)
    np.testing.assert_array_equal(num, [2, 5, 3, np.nan])
    np.testing.assert_array_equal(al, [1, np.nan, np.nan, np.nan])
    assert red[0] == 3.0

    @mt.jit
    def sums(x_ptr, s_ptr, N: tl.constexpr):
        v = tl.load(x_ptr + tl.arange(0, N))
        s = tl.sum(v, axis=0)
        tl.static_assert(s.dtype == tl.uint32)  # narrow unsigned sums widen to uint32, as in Triton
        tl.store(s_ptr, s)
    s = np.zeros(1, np.uint32)
    sums[(1,)](np.full(64, 200, np.uint8), s, N=64)
    assert s[0] == 64 * 200


@mt.jit
def persistent_block_ptr_matmul(a_ptr, b_ptr, c_ptr, M, N, K, NUM: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                                BK: tl.constexpr):
    """Block pointers advanced inside a loop whose trip count differs between programs."""
    tiles_n = tl.cdiv(N, BN)
    for tile in range(tl.program_id(0), tl.cdiv(M, BM) * tiles_n, NUM):
        a_bp = tl.make_block_ptr(a_ptr, (M, K), (K, 1), (tile // tiles_n * BM, 0), (BM, BK), (1, 0))
        b_bp = tl.make_block_ptr(b_ptr, (K, N), (N, 1), (0, tile % tiles_n * BN), (BK, BN), (1, 0))
        acc = tl.zeros((BM, BN), tl.float32)
        for _ in range(0, K, BK):
            acc += tl.dot(tl.load(a_bp, boundary_check=(0, 1)), tl.load(b_bp, boundary_check=(0, 1)))
            a_bp = tl.advance(a_bp, (0, BK))
            b_bp = tl.advance(b_bp, (BK, 0))
        c_bp = tl.make_block_ptr(c_ptr, (M, N), (N, 1), (tile // tiles_n * BM, tile % tiles_n * BN), (BM, BN), (1, 0))
        tl.store(c_bp, acc, boundary_check=(0, 1))


def test_block_pointers_in_divergent_loops():
    rng = np.random.default_rng(8)
    M, N, K = 80, 48, 40
    a, b = rng.standard_normal((M, K)).astype(np.float16), rng.standard_normal((K, N)).astype(np.float16)

    def run():
        c = np.zeros((M, N), np.float32)
        persistent_block_ptr_matmul[(4,)](a, b, c, M, N, K, NUM=4, BM=16, BN=16, BK=16)
        return c, persistent_block_ptr_matmul.last_launch["path"]
    (c1, path), (c2, _) = both(run)
    assert path == "lockstep"
    np.testing.assert_array_equal(c1, c2)
    np.testing.assert_allclose(c1, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)


def test_a_block_pointer_advanced_a_per_program_number_of_times():
    @mt.jit
    def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        bp = tl.make_block_ptr(x_ptr, (n,), (1,), (0,), (BLOCK,), (0,))
        i = 0
        while i < pid:  # program p advances p times: its block pointer is merged at the loop's end
            bp = tl.advance(bp, (BLOCK,))
            i += 1
        tl.store(out_ptr + pid * BLOCK + tl.arange(0, BLOCK), tl.load(bp, boundary_check=(0,), padding_option="zero"))
    x = np.arange(60, dtype=np.float32)

    def run():
        out = np.full(64, -1, np.float32)
        k[(8,)](x, out, 60, BLOCK=8)
        return out, k.last_launch["path"]
    (o1, path), (o2, _) = both(run)
    assert path == "lockstep"
    np.testing.assert_array_equal(o1, o2)
    np.testing.assert_array_equal(o1, np.concatenate([x, np.zeros(4, np.float32)]))


# ---------------------------------------------------------------- names Triton's newest language added
@mt.jit
def _or_and_add(x_ptr, out_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.store(out_ptr, tl.reduce_or(x, 0))
    tl.store(out_ptr + 1, x.reduce_or(axis=0))
    tl.store(out_ptr + 2, tl.reduce_or(tl.reshape(x, (2, N // 2)), 1, keep_dims=True).sum())
    tl.store(out_ptr + 3, tl.max(tl.add(x, 1)) + tl.sub(10, 3) * tl.mul(2, 1))


def test_reduce_or_and_the_arithmetic_functions():
    x = np.array([1, 2, 4, 0, 8, 0, 0, 64], np.int32)
    out = np.zeros(4, np.int32)
    _or_and_add[(1,)](x, out, N=8)
    assert out.tolist() == [79, 79, (1 | 2 | 4) + (8 | 64), 65 + 14]


@mt.jit
def _or_of_floats(x_ptr, out_ptr):
    tl.store(out_ptr, tl.reduce_or(tl.load(x_ptr + tl.arange(0, 4)), 0))


def test_bitwise_reductions_refuse_floats_as_triton_does():
    with pytest.raises(mt.CompilationError, match="reduce_or only supported for integers"):
        _or_of_floats[(1,)](np.zeros(4, np.float32), np.zeros(1, np.float32))


def test_the_math_jit_and_autotuner_modules_triton_code_imports_by_name():
    """`import triton.language.math as tlm`, `from triton.runtime.jit import JITFunction`,
    `from triton.runtime.autotuner import Autotuner, Config, Heuristics`: the same objects as
    `tl.math`, `triton.JITFunction` and `triton.runtime`'s."""
    import minitriton.language.math as tlm
    from minitriton.runtime.autotuner import Autotuner, Config, Heuristics
    from minitriton.runtime.jit import JITFunction, jit

    assert tl.math is tlm and tlm.exp2 is tl.exp2 and tlm.umulhi is tl.umulhi and not hasattr(tlm, "where")
    assert JITFunction is mt.JITFunction and jit is mt.jit and isinstance(_or_of_floats, JITFunction)
    assert Autotuner is mt.runtime.Autotuner and Heuristics is mt.runtime.Heuristics and Config is mt.Config
    from minitriton.language.extra.hip import libdevice as hip_libdevice     # AMD kernels' import
    assert hip_libdevice.asin is tl.extra.cuda.libdevice.asin and tl.extra.hip.libdevice is hip_libdevice


def test_the_core_and_standard_modules_triton_code_imports_by_name():
    import minitriton.language.core as core
    from minitriton.language.standard import _is_power_of_two, _log2, sum, zeros_like  # noqa: F401

    assert core.reshape is tl.reshape and core.constexpr is tl.constexpr and tl.core is core
    assert [core.get_int_dtype(w, s) for w, s in ((8, True), (16, False), (64, True), (1, False))] == \
        [tl.int8, tl.uint16, tl.int64, tl.int1]
    with pytest.raises(ValueError, match="no integer type of bitwidth 12"):
        core.get_int_dtype(12, True)

    @mt.jit
    def bits(x_ptr, y_ptr, N: tl.constexpr):
        x = tl.load(x_ptr + tl.arange(0, N))
        ix = x.to(core.get_int_dtype(x.dtype.primitive_bitwidth, True), bitcast=True)
        n_dims: core.constexpr = _log2(x.numel)
        tl.static_assert(_is_power_of_two(N) and n_dims == 4)
        tl.store(y_ptr + tl.arange(0, N), (ix ^ zeros_like(ix)).to(x.dtype, bitcast=True) + sum(x) * 0)

    x = np.linspace(-2, 2, 16).astype(np.float32)
    y = np.zeros_like(x)
    bits[(1,)](x, y, N=16)
    np.testing.assert_array_equal(x, y)


# ---------------------------------------------------------------- a bitonic argsort as libraries write one
# (the style of the sorts user libraries build on Triton's core and standard modules: blocks
# reshaped to pair elements, halves picked by a sum with a 0/1 mask, swaps done with xor on the
# bits; our own kernels, written to that pattern)


@mt.jit
def _swap(x, ids, flip, i: core.constexpr, n_dims: core.constexpr):
    # compare elements 2**(n_dims - i - 1) apart along the flattened block
    n_outer: core.constexpr = x.numel >> n_dims
    shape: core.constexpr = [n_outer * 2**i, 2, 2**(n_dims - i - 1)]
    y = core.reshape(x, shape)
    pick = core.arange(0, 2)[None, :, None]
    lo = core.reshape(core.broadcast_to(_std_sum(y * (1 - pick), 1)[:, None, :], shape), x.shape).to(x.dtype)
    hi = core.reshape(core.broadcast_to(_std_sum(y * pick, 1)[:, None, :], shape), x.shape).to(x.dtype)
    yi = core.reshape(ids, shape)
    lo_i = core.reshape(core.broadcast_to(_std_sum(yi * (1 - pick), 1)[:, None, :], shape), x.shape).to(ids.dtype)
    hi_i = core.reshape(core.broadcast_to(_std_sum(yi * pick, 1)[:, None, :], shape), x.shape).to(ids.dtype)
    itype = core.get_int_dtype(bitwidth=x.dtype.primitive_bitwidth, signed=True)
    swap = (lo > hi) != flip
    bits = x.to(itype, bitcast=True) ^ core.where(swap, lo.to(itype, bitcast=True) ^ hi.to(itype, bitcast=True),
                                                   zeros_like(x.to(itype, bitcast=True)))
    return bits.to(x.dtype, bitcast=True), ids ^ core.where(swap, lo_i ^ hi_i, zeros_like(ids))


@mt.jit
def _merge(x, ids, stage: core.constexpr, alternate: core.constexpr, n_dims: core.constexpr):
    n_outer: core.constexpr = x.numel >> n_dims
    if alternate:
        shape: core.constexpr = [n_outer * 2 ** (n_dims - 1 - stage), 2, 2**stage]
        flip = core.reshape(core.broadcast_to(core.arange(0, 2)[None, :, None], shape), x.shape)
    else:
        flip = 0
    for i in core.static_range(stage):
        x, ids = _swap(x, ids, flip, i + (n_dims - stage), n_dims)
    return x, ids


@mt.jit
def argsort_kernel(X, V, I, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(X + offs)
    ids = offs
    n_dims: core.constexpr = _log2(N)
    for stage in core.static_range(1, n_dims + 1):
        x, ids = _merge(x, ids, stage, stage < n_dims, n_dims)
    tl.store(V + offs, x)
    tl.store(I + offs, ids)



@pytest.mark.parametrize("n", [8, 256])
def test_a_bitonic_argsort_written_on_the_core_and_standard_modules(n):
    x = np.random.default_rng(n).permutation(n).astype(np.float32) - n / 2
    v, i = np.zeros_like(x), np.zeros(n, np.int32)
    argsort_kernel[(1,)](x, v, i, N=n)
    np.testing.assert_array_equal(v, np.sort(x))
    np.testing.assert_array_equal(i, np.argsort(x, kind="stable"))


@mt.jit
def merge_both_ways(X, NET, OURS, N: tl.constexpr, DESC: tl.constexpr):
    """The merge step written as libraries write it (_merge above, ascending or descending over
    every level) beside tl.bitonic_merge, on the same block."""
    offs = tl.arange(0, N)
    x = tl.load(X + offs)
    n_dims: core.constexpr = _log2(N)
    net = x
    ids = offs
    for i in core.static_range(n_dims):
        net, ids = _swap(net, ids, DESC, i, n_dims)
    tl.store(NET + offs, net)
    tl.store(OURS + offs, tl.bitonic_merge(x, descending=DESC))


@pytest.mark.parametrize("n", [2, 16, 128])
@pytest.mark.parametrize("desc", [False, True])
def test_bitonic_merge_is_the_merge_network_of_tritons_sort(n, desc):
    """A bitonic block comes out sorted; any other block exactly as the network leaves it."""
    rng = np.random.default_rng(n)
    net, ours = np.zeros(n, np.float32), np.zeros(n, np.float32)
    bitonic = np.concatenate([np.sort(rng.standard_normal(n // 2)), -np.sort(rng.standard_normal(n // 2))])
    bitonic = bitonic.astype(np.float32)
    for x in (bitonic, rng.standard_normal(n).astype(np.float32)):
        merge_both_ways[(1,)](x, net, ours, N=n, DESC=desc)
        np.testing.assert_array_equal(ours, net)
        if n > 2 and x is not bitonic:          # not a sort in disguise: the network leaves it unsorted
            assert not np.array_equal(ours, np.sort(ours)[::-1] if desc else np.sort(ours))
    merge_both_ways[(1,)](bitonic, net, ours, N=n, DESC=desc)
    expected = np.sort(bitonic)
    np.testing.assert_array_equal(ours, expected[::-1] if desc else expected)


@mt.jit
def _band_sum(acc, X_block_ptr, hi, BLOCK: tl.constexpr):
    for start in range(0, hi, BLOCK):        # a trip count of its own per program
        acc += tl.load(X_block_ptr)
        X_block_ptr = tl.advance(X_block_ptr, (BLOCK, 0))
    return acc


@mt.jit
def causal_band_sums(X, Out, stride_h, N: tl.constexpr, D: tl.constexpr, BLOCK: tl.constexpr):
    """Fused attention's causal shape (Triton's tutorial 06): each head's block pointer starts at
    its own base (`X + head * stride`), and a helper walks it for a number of steps that grows
    with the program's row block."""
    row_block, head = tl.program_id(0), tl.program_id(1)
    X_block_ptr = tl.make_block_ptr(base=X + head.to(tl.int64) * stride_h, shape=(N, D), strides=(D, 1),
                                    offsets=(0, 0), block_shape=(BLOCK, D), order=(1, 0))
    acc = _band_sum(tl.zeros([BLOCK, D], tl.float32), X_block_ptr, (row_block + 1) * BLOCK, BLOCK)
    tl.store(Out + head * N * D + row_block * BLOCK * D + tl.arange(0, BLOCK)[:, None] * D + tl.arange(0, D)[None, :],
             acc)


def test_a_divergent_loop_over_block_pointers_whose_base_differs_by_program():
    H, N, D, B = 3, 64, 8, 16
    x = np.random.default_rng(4).standard_normal((H, N, D)).astype(np.float32)

    def run():
        out = np.zeros((H, N, D), np.float32)
        causal_band_sums[(N // B, H)](x, out, N * D, N=N, D=D, BLOCK=B)
        return out, causal_band_sums.last_launch["path"]
    (got, path), (alone, _) = both(run)
    assert path == "lockstep"
    np.testing.assert_array_equal(got, alone)
    want = np.stack([np.concatenate([x[h].reshape(N // B, B, D)[:r + 1].sum(0) for r in range(N // B)]) for h in range(H)])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- libdevice on big blocks
@mt.jit
def libdevice_kernel(x_ptr, y_ptr, a_ptr, b_ptr, j_ptr, c_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x, y = tl.load(x_ptr + offs), tl.load(y_ptr + offs)
    tl.store(a_ptr + offs, libdevice.asin(x))
    tl.store(c_ptr + offs, libdevice.asin(x) * 2.0 + y)
    tl.store(b_ptr + offs, libdevice.atan2(x, y))
    tl.store(j_ptr + offs, libdevice.j0(x))


@pytest.mark.parametrize("seed", [0, 1])
def test_libdevice_results_of_big_blocks_keep_their_values(seed):
    # 1024 programs x 1024 lanes: a one-operand result (4 MB) is deferred and computed straight
    # into the output it is stored to, or when arithmetic needs it; a two-operand one goes into a
    # recycled array, which the second launch reuses: every stored result must still be its own
    rng = np.random.default_rng(seed)
    n = 1 << 20
    x, y = (rng.random(n, np.float32) * 2 - 1 for _ in range(2))
    a, b, j, c = (np.zeros(n, np.float32) for _ in range(4))
    for _ in range(2):
        libdevice_kernel[(n // 1024,)](x, y, a, b, j, c, BLOCK=1024)
        np.testing.assert_array_equal(a, np.arcsin(x))
        np.testing.assert_array_equal(b, np.arctan2(x, y))
        np.testing.assert_array_equal(j, special.j0(x).astype(np.float32))
        np.testing.assert_array_equal(c, np.arcsin(x) * np.float32(2) + y)


# ---------------------------------------------------------------- tl.where on big blocks
@mt.jit
def where_kernel(c_ptr, x_ptr, y_ptr, o_ptr, s_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    c, x, y = tl.load(c_ptr + offs) != 0, tl.load(x_ptr + offs), tl.load(y_ptr + offs)
    tl.store(o_ptr + offs, tl.where(c, x, y))
    tl.store(s_ptr + offs, tl.where(c, x, 0))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int8, np.uint64])
def test_where_on_big_blocks_keeps_every_bit(dtype):
    # 64 programs x 1024 lanes, a random condition: the masked bit-select loop (fast_loops.select)
    # must give np.where's bits, NaN payloads, infinities and -0.0 included
    rng = np.random.default_rng(7)
    n = 1 << 16
    c = rng.integers(0, 2, n).astype(np.int8)
    raw = rng.integers(0, 256, (2, n * np.dtype(dtype).itemsize), dtype=np.uint8)
    x, y = (r.view(dtype) for r in raw)
    if np.dtype(dtype).kind == "f":
        x[:4] = [np.nan, -np.inf, -0.0, np.inf]
    o, s = np.zeros(n, dtype), np.zeros(n, dtype)
    where_kernel[(n // 1024,)](c, x, y, o, s, BLOCK=1024)
    bits = f"u{np.dtype(dtype).itemsize}"
    np.testing.assert_array_equal(o.view(bits), np.where(c != 0, x, y).view(bits))
    np.testing.assert_array_equal(s.view(bits), np.where(c != 0, x, np.zeros(1, dtype)).view(bits))


def test_a_one_element_condition_and_item():
    """`if` on a longer block is refused as ambiguous, in Triton's words; `x.item()` and
    `x.sqrt_rn()` are tensor methods (the one-element `if` is Triton's test_unsplat, in
    tests/triton/test_core_2026.py)."""
    @mt.jit
    def ambiguous(x):
        if tl.load(x + tl.arange(0, 2)) > 0:
            tl.store(x, 0)
    with pytest.raises(Exception, match="more than one value is ambiguous"):
        ambiguous[(1,)](np.ones(2, np.int32))

    @mt.jit
    def methods(x_ptr, out_ptr):
        x = tl.load(x_ptr + tl.arange(0, 4))
        tl.store(out_ptr + tl.arange(0, 4), x.sqrt_rn() + tl.reshape(x, (2, 2)).sum(1).sum(0).item())
    x, out = np.array([1, 4, 9, 16], np.float32), np.zeros(4, np.float32)
    methods[(1,)](x, out)
    np.testing.assert_array_equal(out, np.sqrt(x) + 30)


def _name_from(specialization):
    ty = specialization.signature["value1"]
    cst = "_".join(k for k, v in specialization.constants.items() if isinstance(k, str) and v == 1)
    return f"kernel_{ty}_{cst}"


@pytest.mark.parametrize("value, value_type", [(-1, "i32"), (0, "i32"), (-2**31, "i32"), (2**31 - 1, "i32"),
                                               (2**31, "i64"), (2**32 - 1, "i64"), (2**63 - 1, "i64"),
                                               (-2**63, "i64"), (2**63, "u64"), (2**64 - 1, "u64")])
def test_warmup_names_a_kernel_by_its_repr_function(value, value_type):
    """Triton's test_value_specialization: `@jit(repr=f)` names the warmed-up kernel from its
    specialization, whose signature types an int argument by the narrowest of i32, i64, u64 and
    whose constants hold the arguments equal to 1."""
    @mt.jit(repr=_name_from)
    def kernel(value1, is_one, X):
        pass
    h = kernel.warmup(value, 1, np.zeros(1, np.float32), grid=(1,))
    assert h.name == f"kernel_{value_type}_is_one"


def test_core_names_older_triton_code_reads():
    """`tl.core._aggregate` (the aggregate decorator's older name, which Gluon-era code still uses)
    and `tl.core.to_tensor` (a number as a scalar block)."""
    @tl.core._aggregate
    class Pair:
        first: tl.tensor
        second: tl.tensor

        def __init__(self, first, second):
            self.first = first
            self.second = second

    @mt.jit
    def k(out_ptr):
        p = Pair(tl.arange(0, 4), tl.core.to_tensor(True))
        tl.static_assert(p.second.dtype == tl.int1)
        tl.store(out_ptr + tl.arange(0, 4), p.first + p.second)
    out = np.zeros(4, np.int32)
    k[(1,)](out)
    assert out.tolist() == [1, 2, 3, 4]


@pytest.mark.parametrize("x, y, dtype, op, overflows", [
    (2 ** 31 - 1, 1, np.int32, "add", True), (-2 ** 31, -1, np.int32, "add", True), (2 ** 31 - 2, 1, np.int32, "add", False),
    (2 ** 30, 2, np.int32, "mul", True), (-2 ** 31, 1, np.int32, "sub", True), (-2 ** 15, -1, np.int16, "add", True),
    (255, 1, np.uint8, "add", True), (2 ** 63 - 1, 1, np.int64, "add", False)])   # 64 bits: not checked, as in Triton
def test_debug_mode_checks_integer_overflow(x, y, dtype, op, overflows):
    """Triton's test_debug (sanitize_overflow): in debug mode an integer add, sub or mul below 64
    bits that leaves its type fails a device-side assert; without it the result wraps."""
    @mt.jit
    def k(X, Y, Z, OP: tl.constexpr):
        a, b = tl.load(X), tl.load(Y)
        tl.store(Z, a + b if OP == "add" else a - b if OP == "sub" else a * b)
    X, Y = np.array([x], dtype), np.array([y], dtype)
    Z = np.zeros(1, dtype)
    k[(1,)](X, Y, Z, op)
    exact = {"add": x + y, "sub": x - y, "mul": x * y}[op]
    assert int(Z[0]) == (exact - int(np.iinfo(dtype).min)) % (1 << 8 * Z.itemsize) + int(np.iinfo(dtype).min)
    if overflows:
        with pytest.raises(RuntimeError, match="device-side assert.*int overflow detected for operation " + op):
            k[(1,)](X, Y, Z, op, debug=True)
        with mt.knobs.runtime.scope():
            mt.knobs.runtime.debug = True
            with pytest.raises(RuntimeError, match="int overflow"):
                k[(1,)](X, Y, Z, op)
    else:
        k[(1,)](X, Y, Z, op, debug=True)
        assert int(Z[0]) == exact if abs(exact) < 2 ** 63 else True


def test_packed_fp32_pair_math_rounds_once_and_takes_fp32_only():
    """tl.math.mul/add/sub/fma_f32x2 (Blackwell's packed pairs) per element: fp32 rounded to
    nearest, the fma with one rounding; other types refused by name."""
    @mt.jit
    def k(a_ptr, out_ptr):
        offs = tl.arange(0, 4)
        a = tl.load(a_ptr + offs)
        tl.store(out_ptr + offs, tl.math.fma_f32x2(a, a, -tl.math.mul_f32x2(a, a)))

    a = np.float32(1 + 2 ** -12) * np.ones(4, np.float32)
    out = np.empty(4, np.float32)
    k[(1,)](a, out)
    np.testing.assert_array_equal(out, np.float32(2.0 ** -24))   # the product's low bits, kept by the fma

    @mt.jit
    def bad(a_ptr):
        offs = tl.arange(0, 4)
        tl.math.add_f32x2(tl.load(a_ptr + offs), tl.load(a_ptr + offs))

    with pytest.raises(TypeError, match="tl.math.add_f32x2 takes fp32 blocks, got fp16"):
        bad[(1,)](np.ones(4, np.float16))
