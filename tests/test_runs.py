"""Offsets that step evenly along one axis (affine.runs_of) -- an embedding's `idx[:, None] * D +
cols[None, :]`, a matmul's rows wrapped by `% M` -- are read run by run, and programs that read
the same runs (the tiles of one row) share them, multiplied as one GEMM.  Every test compares
with runs switched off (the lane-by-lane path): the same values, the same errors."""
import numpy as np
import pytest

import minitriton as mt
import minitriton.language as tl
from minitriton import affine, dot, gathers
from minitriton.memory import OutOfBoundsError
from kernels.tutorials import matmul_kernel
from tests.switches import on_and_off


@mt.jit
def embedding(T, I, O, n, D: tl.constexpr, BR: tl.constexpr):
    rows = tl.program_id(0) * BR + tl.arange(0, BR)
    idx = tl.load(I + rows, mask=rows < n, other=0)
    cols = tl.arange(0, D)
    x = tl.load(T + idx[:, None] * D + cols[None, :], mask=(rows < n)[:, None], other=-2.0)
    tl.store(O + rows[:, None] * D + cols[None, :], x, mask=(rows < n)[:, None])


@mt.jit
def columns(X, I, O, M, STEP: tl.constexpr, BR: tl.constexpr, BC: tl.constexpr):
    """Runs down a column (axis 0 steps by M), the gathered indices along axis 1, three ranks."""
    r = tl.arange(0, BR)
    c = tl.load(I + tl.program_id(0) * BC + tl.arange(0, BC))
    x = tl.load(X + r[:, None] * M * STEP + c[None, :] + tl.arange(0, 2)[:, None, None] * M)
    tl.store(O + tl.program_id(0) * BR * BC + r[:, None] * BC + tl.arange(0, BC)[None, :], tl.sum(x, 0))


def both_ways(fn):
    return on_and_off(affine.set_runs, fn)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64])
@pytest.mark.parametrize("n", [256, 250, 1])
def test_an_embedding_gather_reads_rows_and_matches_the_lane_by_lane_path(dtype, n, spy):
    rng = np.random.default_rng(n)
    table = (rng.standard_normal((97, 16)) * 8).astype(dtype)
    idx = rng.integers(0, 97, n).astype(np.int32)
    used = spy(gathers, "read_runs")

    def run():
        out = np.full((256, 16), 5, dtype)
        embedding[(mt.cdiv(n, 64),)](table, idx, out, n, D=16, BR=64)
        return out
    on, off = both_ways(run)
    assert any(u is not None for u in used), "the gather should read run by run"
    np.testing.assert_array_equal(on, off)
    np.testing.assert_array_equal(on[:n], table[idx])
    assert (on[n:] == 5).all()


def test_runs_down_columns_and_in_three_dimensions():
    rng = np.random.default_rng(1)
    x = rng.standard_normal(40 * 50).astype(np.float32)
    idx = rng.integers(0, 10, 3 * 8).astype(np.int32)
    run = lambda: (columns[(3,)](x, idx, out := np.zeros(3 * 4 * 8, np.float32), 10, STEP=3, BR=4, BC=8), out)[1]
    on, off = both_ways(run)
    np.testing.assert_array_equal(on, off)
    xs = x[:4 * 30].reshape(4, 30)
    want = np.stack([xs[:, idx[p * 8:(p + 1) * 8]] + xs[:, idx[p * 8:(p + 1) * 8] + 10] for p in range(3)])
    np.testing.assert_allclose(on.reshape(3, 4, 8), want, rtol=1e-6)


def test_an_index_out_of_bounds_is_refused_the_same_way():
    table = np.zeros((10, 16), np.float32)
    idx = np.array([3, 10, 2, 0], np.int32)      # row 10 is past the table
    messages = []
    for on in (True, False):
        prev = affine.set_runs(on)
        try:
            with pytest.raises(OutOfBoundsError) as err:
                embedding[(1,)](table, idx, np.zeros((4, 16), np.float32), 4, D=16, BR=4)
            messages.append(str(err.value).split("\n")[0])
        finally:
            affine.set_runs(prev)
    assert messages[0] == messages[1]


def test_offsets_that_wrap_in_int32_are_not_taken_for_runs():
    """idx * 2^28 wraps in int32: runs of the unwrapped values would read elsewhere."""
    @mt.jit
    def wrapped(T, I, O, BR: tl.constexpr):
        idx = tl.load(I + tl.arange(0, BR))
        off = idx[:, None] * 268435456 + tl.arange(0, 4)[None, :]
        tl.store(O + tl.arange(0, BR)[:, None] * 4 + tl.arange(0, 4)[None, :], tl.load(T + off))
    table = np.arange(64, dtype=np.float32)
    idx = np.array([0, 16, 32, 48], np.int32)       # 16 * 2^28 = 2^32: wraps to 0
    on, off = both_ways(lambda: (wrapped[(1,)](table, idx, out := np.zeros((4, 4), np.float32), BR=4), out)[1])
    np.testing.assert_array_equal(on, off)
    np.testing.assert_array_equal(on, np.tile(np.arange(4, dtype=np.float32), (4, 1)))


@pytest.mark.parametrize("m, n, k", [(100, 70, 30), (96, 64, 64), (37, 5, 17)])
def test_tutorial_matmul_with_wrapped_rows_shares_tiles_in_one_gemm(m, n, k, spy):
    """Tutorial 03 wraps its rows and columns with `% M`, `% N`: at sizes that are not block
    multiples its pointers are runs; programs in one row of tiles share the A runs, and the
    product is one GEMM over the distinct blocks (same sums, BLAS's order: fp32 bound)."""
    rng = np.random.default_rng(m)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    used = spy(dot, "_shared_matmul")

    def run():
        c = np.zeros((m, n), np.float16)
        grid = (mt.cdiv(m, 16) * mt.cdiv(n, 16),)
        matmul_kernel[grid](a, b, c, m, n, k, k, 1, n, 1, n, 1, BLOCK_SIZE_M=16, BLOCK_SIZE_N=16,
                            BLOCK_SIZE_K=16, GROUP_SIZE_M=4, ACTIVATION="")
        return c
    on, off = both_ways(run)
    if m % 16 or n % 16:
        assert any(u is not None for u in used), "wrapped tiles should be multiplied as one GEMM"
    want = a.astype(np.float32) @ b.astype(np.float32)
    bound = np.abs(a.astype(np.float32)) @ np.abs(b.astype(np.float32)) * k * 2.0 ** -23 + 2e-3 * np.abs(want)
    assert (np.abs(on.astype(np.float32) - off.astype(np.float32)) <= bound + 1e-3).all()
    np.testing.assert_allclose(on.astype(np.float32), want, rtol=2e-2, atol=5e-2)


def test_a_k_tail_past_the_end_of_the_argument_reads_only_masked_lanes_there():
    """The last rows' K tail runs past the end of A: those lanes are masked off, read clamped,
    and replaced by `other`; a kept lane past the end is still refused."""
    @mt.jit
    def tail(A, I, O, K, BK: tl.constexpr, BR: tl.constexpr):
        r = tl.load(I + tl.arange(0, BR))
        ks = tl.arange(0, BK)
        x = tl.load(A + r[:, None] * K + ks[None, :], mask=ks[None, :] < K, other=9.0)
        tl.store(O + tl.arange(0, BR)[:, None] * BK + ks[None, :], x)
    a = np.arange(5 * 6, dtype=np.float32)
    idx = np.array([4, 0, 4, 2], np.int32)
    on, off = both_ways(lambda: (tail[(1,)](a, idx, out := np.zeros((4, 8), np.float32), 6, BK=8, BR=4), out)[1])
    np.testing.assert_array_equal(on, off)
    want = np.full((4, 8), 9.0, np.float32)
    want[:, :6] = a.reshape(5, 6)[idx]
    np.testing.assert_array_equal(on, want)
    with pytest.raises(OutOfBoundsError):
        tail[(1,)](a, idx, np.zeros((4, 8), np.float32), 7, BK=8, BR=4)


def test_programs_sharing_runs_keep_their_own_other():
    """Two programs read the same rows, each masked with its own `other`: no sharing then."""
    @mt.jit
    def own_other(T, O, D: tl.constexpr):
        p = tl.program_id(0)
        rows = tl.arange(0, 4) % 3
        cols = tl.arange(0, D)
        fill = p.to(tl.float32) * 10.0
        x = tl.load(T + rows[:, None] * D + cols[None, :], mask=cols[None, :] < 5, other=fill)
        tl.store(O + p * 4 * D + tl.arange(0, 4)[:, None] * D + cols[None, :], x)
    t = np.arange(3 * 8, dtype=np.float32)
    on, off = both_ways(lambda: (own_other[(4,)](t, out := np.zeros(4 * 4 * 8, np.float32), D=8), out)[1])
    np.testing.assert_array_equal(on, off)
    got = on.reshape(4, 4, 8)
    assert (got[:, :, 5:] == np.arange(4)[:, None, None] * 10.0).all()
    np.testing.assert_array_equal(got[2, :, :5], t.reshape(3, 8)[[0, 1, 2, 0], :5])


@pytest.mark.parametrize("keys", [
    [], [5], [1, 2, 9, 40], [3, 3, 3, 3], [7, 7, 7, 2], [7, 2, 7, 7, 2], [7, 7, 9, 7, 9, 9],
    [4, 4, 1, 1, 0, 9], [2, 1], [0, 0, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5], [6, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]])
def test_group_keys_answers_as_unique_does(keys):
    """The shortcuts (increasing keys, all alike, alike but for a few) answer as np.unique."""
    keys = np.array(keys, np.int64)
    distinct, first, which = gathers.group_keys(keys)
    want = np.unique(keys, return_index=True, return_inverse=True)
    for got, expected in zip((distinct, first, which), want):
        np.testing.assert_array_equal(got, expected.reshape(-1))
