"""K loops of dots run as one step (minitriton/fusion.py): the same bits as trip by trip, only
where that is provable, and the loop as written everywhere else."""
import numpy as np
import pytest

import minitriton as mt
import minitriton.language as tl
from minitriton import fusion
from kernels import gemm
from kernels.tutorials import matmul_kernel, matmul_persistent, grouped_gemm


def _fused_and_not(run):
    """(result fused, trips fused, result trip by trip) of run() -> (array, kernel)."""
    got, kernel = run()
    got, trips = got.copy(), kernel.last_launch["fused"]
    with fusion.disabled():
        want, kernel = run()
    assert kernel.last_launch["fused"] == 0
    return got, trips, want


def _same_bits(x, y):
    assert x.dtype == y.dtype and x.shape == y.shape
    np.testing.assert_array_equal(x.view(np.uint8), y.view(np.uint8))


def _operands(m, n, k, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((m, k)).astype(np.float16), rng.standard_normal((k, n)).astype(np.float16)


@pytest.mark.parametrize("k,trips", [(256, 4), (300, 4)])   # 300: a ragged last trip runs as written
def test_tutorial_matmul_masked_k_loop(k, trips):
    a, b = _operands(128, 96, k)

    def run():
        c = np.empty((128, 96), np.float16)
        matmul_kernel[(mt.cdiv(128, 64) * mt.cdiv(96, 32),)](a, b, c, 128, 96, k, k, 1, 96, 1, 96, 1, BLOCK_SIZE_M=64,
                                                             BLOCK_SIZE_N=32, BLOCK_SIZE_K=64, GROUP_SIZE_M=2,
                                                             ACTIVATION="")
        return c, matmul_kernel
    got, fused, want = _fused_and_not(run)
    assert fused == trips
    _same_bits(got, want)
    ref = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(got.astype(np.float32), ref.astype(np.float32), rtol=1e-2, atol=1e-1)


@pytest.mark.parametrize("split_k", [1, 3])
def test_library_gemm_with_derived_mask_values(split_k):
    """gemm.py computes `k_left` from the loop variable each trip and masks with it."""
    a, b = _operands(96, 80, 448, seed=1)
    cfg = dict(BLOCK_M=32, BLOCK_N=16, BLOCK_K=32, GROUP_M=2, SPLIT_K=split_k)
    got, fused, want = _fused_and_not(lambda: (gemm.matmul(a, b, config=cfg), gemm.matmul_kernel))
    assert fused > 0
    _same_bits(got, want)


def test_divergent_kernels_persistent_and_grouped():
    a, b = _operands(256, 192, 320, seed=2)

    def persistent():
        c = np.empty((256, 192), np.float16)
        matmul_persistent[(5,)](a, b, c, 256, 192, 320, NUM_SMS=5, BM=64, BN=64, BK=32)
        return c, matmul_persistent
    got, fused, want = _fused_and_not(persistent)
    assert fused > 0
    _same_bits(got, want)

    mats = [_operands(64, 64, 64, seed=s) for s in range(3)]
    outs = [np.empty((64, 64), np.float16) for _ in mats]
    table = [np.array([mt.data_ptr(x) for x in xs], np.int64)
             for xs in ([p[0] for p in mats], [p[1] for p in mats], outs)]
    dims = np.array([64] * 9, np.int32)

    def grouped():
        grouped_gemm[(7,)](*table, dims, 3, NUM_SMS=7, BM=32, BN=32, BK=16)
        return np.stack(outs), grouped_gemm
    got, fused, want = _fused_and_not(grouped)
    assert fused > 0
    _same_bits(got, want)


def _k_loop(read_after):
    @mt.jit
    def kernel(a_ptr, b_ptr, c_ptr, K, STEP: tl.constexpr, HALF_ACC: tl.constexpr, BK: tl.constexpr):
        """One 32x32 tile over K, in the variations the fusion must refuse or handle."""
        rows, cols, ks = tl.arange(0, 32), tl.arange(0, 32), tl.arange(0, BK)
        a_ptrs = a_ptr + rows[:, None] * K + ks[None, :]
        b_ptrs = b_ptr + ks[:, None] * 32 + cols[None, :]
        acc = tl.zeros((32, 32), tl.float16 if HALF_ACC else tl.float32)
        a = tl.zeros((32, BK), tl.float16)
        for k in range(0, K // STEP):
            a = tl.load(a_ptrs)
            acc += tl.dot(a, tl.load(b_ptrs), out_dtype=tl.float16 if HALF_ACC else tl.float32)
            a_ptrs += STEP
            b_ptrs += STEP * 32
        tl.store(c_ptr + rows[:, None] * 32 + cols[None, :], acc)

    @mt.jit
    def kernel_read_after(a_ptr, b_ptr, c_ptr, K, STEP: tl.constexpr, HALF_ACC: tl.constexpr, BK: tl.constexpr):
        rows, cols, ks = tl.arange(0, 32), tl.arange(0, 32), tl.arange(0, BK)
        a_ptrs = a_ptr + rows[:, None] * K + ks[None, :]
        b_ptrs = b_ptr + ks[:, None] * 32 + cols[None, :]
        acc = tl.zeros((32, 32), tl.float32)
        a = tl.zeros((32, BK), tl.float16)
        for k in range(0, K // STEP):
            a = tl.load(a_ptrs)
            acc += tl.dot(a, tl.load(b_ptrs))
            a_ptrs += STEP
            b_ptrs += STEP * 32
        acc += tl.sum(a.to(tl.float32), axis=1)[:, None]   # the loop's last tile, read after it
        tl.store(c_ptr + rows[:, None] * 32 + cols[None, :], acc)
    return kernel_read_after if read_after else kernel


@pytest.mark.parametrize("step,read_after,half,fuses", [
    (32, False, False, True),       # tiles continue each other along K
    (64, False, False, False),      # every other tile: not one window
    (32, True, False, False),       # a loop value read after the loop: the loop runs as written
    (32, False, True, True),        # fp16 out_dtype and accumulator: one chain, rounded once either way
])
def test_what_fuses_and_what_runs_as_written(step, read_after, half, fuses):
    a, b = _operands(32, 32, 256, seed=4)
    kernel = _k_loop(read_after)

    def run():
        c = np.zeros((32, 32), np.float32)
        kernel[(1,)](a, b, c, 256, STEP=step, HALF_ACC=half, BK=32)
        return c, kernel
    got, fused, want = _fused_and_not(run)
    assert (fused > 0) == fuses
    _same_bits(got, want)


@mt.jit
def narrow_acc_kernel(a_ptr, b_ptr, c_ptr, K, BK: tl.constexpr):
    rows, ks = tl.arange(0, 16), tl.arange(0, BK)
    a_ptrs = a_ptr + rows[:, None] * K + ks[None, :]
    b_ptrs = b_ptr + ks[:, None] * 16 + rows[None, :]
    acc = tl.zeros((16, 16), tl.float16)
    for _ in range(0, K // BK):
        acc += tl.dot(tl.load(a_ptrs), tl.load(b_ptrs)).to(tl.float16)   # each trip's product rounded into fp16
        a_ptrs += BK
        b_ptrs += BK * 16
    tl.store(c_ptr + rows[:, None] * 16 + rows[None, :], acc)


def test_a_narrower_accumulator_rounds_every_trip_as_written():
    a, b = _operands(16, 16, 512, seed=5)

    def run():
        c = np.zeros((16, 16), np.float16)
        narrow_acc_kernel[(1,)](a, b, c, 512, BK=16)
        return c, narrow_acc_kernel
    got, fused, want = _fused_and_not(run)
    assert fused == 0
    _same_bits(got, want)
    once = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    assert not np.array_equal(got, once)   # 32 roundings differ from one


@mt.jit
def overrun_kernel(a_ptr, b_ptr, c_ptr, K, TRIPS: tl.constexpr):
    rows, ks = tl.arange(0, 16), tl.arange(0, 16)
    a_ptrs = a_ptr + rows[:, None] * K + ks[None, :]
    b_ptrs = b_ptr + ks[:, None] * 16 + rows[None, :]
    acc = tl.zeros((16, 16), tl.float32)
    for _ in range(TRIPS):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += 16
        b_ptrs += 16 * 16
    tl.store(c_ptr + rows[:, None] * 16 + rows[None, :], acc)


def test_a_loop_that_runs_off_its_array_reports_it_as_written():
    a, b = _operands(16, 16, 64, seed=6)
    messages = []
    for ctx in (fusion.disabled, lambda: __import__("contextlib").nullcontext()):
        with ctx(), pytest.raises(IndexError) as e:
            overrun_kernel[(1,)](a, b, np.zeros((16, 16), np.float32), 64, TRIPS=5)
        messages.append(str(e.value))
    assert messages[0] == messages[1]


def test_tracing_counts_every_trip():
    """The HypoGPU tracer counts trips, loads and FLOPs: a traced launch never fuses."""
    from minitriton import counting
    a, b = _operands(64, 64, 256, seed=7)
    cfg = dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, GROUP_M=1, SPLIT_K=1)
    counts = []
    for ctx in (fusion.disabled, lambda: __import__("contextlib").nullcontext()):
        with ctx(), counting.recording() as rec:
            gemm.matmul(a, b, config=cfg)
        counts.append([vars(c) for c in rec.launches[0].counts])
    assert len(counts[0]) == len(counts[1])
    for x, y in zip(*counts):
        assert x.keys() == y.keys()
        for key in x:
            if isinstance(x[key], dict):
                assert x[key].keys() == y[key].keys(), key
                assert all(np.array_equal(x[key][n], y[key][n]) for n in x[key]), key
            else:
                assert np.array_equal(np.asarray(x[key]), np.asarray(y[key])), key
    assert counts[0][0]["trips"] > 0


@mt.jit
def bad_dot_kernel(a_ptr, b_ptr, c_ptr, K):
    rows, ks = tl.arange(0, 16), tl.arange(0, 16)
    a_ptrs = a_ptr + rows[:, None] * K + ks[None, :]
    b_ptrs = b_ptr + ks[:, None] * 16 + rows[None, :]
    acc = tl.zeros((16, 16), tl.float32)
    for _ in range(0, K // 16):
        acc += tl.dot(tl.load(a_ptrs), tl.load(b_ptrs))   # fp16 @ fp32: tl.dot refuses
        a_ptrs += 16
        b_ptrs += 16 * 16
    tl.store(c_ptr + rows[:, None] * 16 + rows[None, :], acc)


def test_an_error_names_the_trip_shapes_as_written():
    a, _ = _operands(16, 16, 64, seed=8)
    b = np.ones((64, 16), np.float32)
    messages = []
    for ctx in (fusion.disabled, lambda: __import__("contextlib").nullcontext()):
        with ctx(), pytest.raises(TypeError) as e:
            bad_dot_kernel[(1,)](a, b, np.zeros((16, 16), np.float32), 64)
        messages.append(str(e.value))
    assert messages[0] == messages[1] and "same dtype" in messages[0]


@pytest.mark.parametrize("m, n, k, trips", [(100, 70, 96, 3), (100, 70, 90, 2), (64, 64, 64, 2)])
def test_a_matmul_masking_its_edge_tiles_fuses_under_its_row_masks(m, n, k, trips):
    """The edge tiles' loads keep some rows (or columns) and not others, the same in every trip
    and along K: the fused load keeps the same ones.  The trip where K's own mask cuts (90 of
    3 x 32) runs as written."""
    from kernels.indexing import masked_matmul
    a, b = _operands(m, n, k, seed=m + k)

    def run():
        c = np.empty((m, n), np.float16)
        masked_matmul[(mt.cdiv(m, 32) * mt.cdiv(n, 32),)](a, b, c, m, n, k, BM=32, BN=32, BK=32)
        return c, masked_matmul
    got, fused, want = _fused_and_not(run)
    assert fused == trips
    want32 = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(got.astype(np.float32), want32, rtol=1e-2, atol=5e-2)
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=1e-2, atol=5e-2)


def test_a_mask_that_changes_along_k_is_not_fused():
    """A lower-triangular mask (`k index <= row`) differs along K: every trip runs as written."""
    @mt.jit
    def lower(A, B, C, K, BM: tl.constexpr, BK: tl.constexpr):
        rm = tl.arange(0, BM)
        acc = tl.zeros((BM, BM), tl.float32)
        for k in range(0, tl.cdiv(K, BK)):
            ks = k * BK + tl.arange(0, BK)
            x = tl.load(A + rm[:, None] * K + ks[None, :], mask=ks[None, :] <= rm[:, None], other=0.0)
            y = tl.load(B + ks[:, None] * BM + rm[None, :])
            acc = tl.dot(x, y, acc)
        tl.store(C + rm[:, None] * BM + rm[None, :], acc)
    a, b = _operands(32, 32, 64, seed=5)
    c = np.empty((32, 32), np.float32)
    lower[(1,)](a, b, c, 64, BM=32, BK=16)
    assert lower.last_launch["fused"] == 0
    a32 = np.tril(np.ones((32, 64), bool)) * a.astype(np.float32)
    np.testing.assert_allclose(c, a32 @ b.astype(np.float32), rtol=1e-4, atol=1e-3)
