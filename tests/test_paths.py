"""Lockstep execution and one-program-at-a-time execution make the same BLAS call for each
program's product, and so give the same bits, except where lockstep multiplies a grid of tiles
as one GEMM: there they agree within the fp32 accumulation bound."""
import numpy as np
import pytest

import minitriton as mt
from minitriton.testing import assert_dot_close
from kernels import gemm, conv, rowsum, rowsoftmax


def _both_paths(run):
    lockstep = run()
    with mt.one_program_at_a_time():
        sequential = run()
    return lockstep, sequential


def _same_bits(x, y):
    assert x.dtype == y.dtype and x.shape == y.shape
    np.testing.assert_array_equal(x.view(np.uint8), y.view(np.uint8))


@pytest.mark.parametrize("cfg", [
    dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8, SPLIT_K=1),
    dict(BLOCK_M=16, BLOCK_N=32, BLOCK_K=16, GROUP_M=3, SPLIT_K=1),   # partial GROUP_M groups
    dict(BLOCK_M=32, BLOCK_N=16, BLOCK_K=64, GROUP_M=2, SPLIT_K=4),
    dict(BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, GROUP_M=1, SPLIT_K=16),
])
def test_matmul_paths_are_bit_identical(cfg):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((200, 100)).astype(np.float16)
    b = rng.standard_normal((100, 150)).astype(np.float16)
    bias = rng.standard_normal(150).astype(np.float16)
    _same_bits(*_both_paths(lambda: gemm.matmul(a, b, bias, "relu", config=cfg)))


def test_other_kernels_paths_are_bit_identical():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 9, 7, 8)).astype(np.float16)
    w = rng.standard_normal((3, 3, 8, 16)).astype(np.float16)
    cfg = dict(BLOCK_M=32, BLOCK_N=16, BLOCK_K=32, GROUP_M=2, SPLIT_K=2)
    _same_bits(*_both_paths(lambda: conv.conv2d(x, w, stride=2, padding=1, config=cfg)))
    r = rng.standard_normal((5, 3000)).astype(np.float16)
    _same_bits(*_both_paths(lambda: rowsum.row_sum(r, dict(BLOCK_N=256, SPLIT=4))))
    s = rng.standard_normal((13, 100)).astype(np.float32)
    _same_bits(*_both_paths(lambda: rowsoftmax.softmax(s, dict(ROWS=4))))


def test_memory_pressure_runs_fewer_programs_at_a_time(monkeypatch):
    """Smaller lockstep chunks multiply smaller grids of tiles (dot._grid_matmul): the same bits
    where BLAS sums a tile the same way in any GEMM, else within the fp32 accumulation bound."""
    import minitriton.dot as ops
    rng = np.random.default_rng(2)
    a = rng.standard_normal((250, 512)).astype(np.float16)   # ragged M: operands are gathered copies
    b = rng.standard_normal((512, 96)).astype(np.float16)
    cfg = dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, GROUP_M=4, SPLIT_K=1)
    plenty = gemm.matmul(a, b, config=cfg)
    monkeypatch.setattr(ops, "CHAIN_COPY_BYTES", 64 << 10)
    calls = []
    original = ops._chained

    def spy(*args):
        try:
            return original(*args)
        except ops.MemoryPressure:
            calls.append(1)
            raise
    monkeypatch.setattr(ops, "_chained", spy)
    squeezed = gemm.matmul(a, b, config=cfg)
    assert calls, "the small budget should have forced smaller lockstep chunks"
    assert_dot_close(plenty, squeezed, a, b)


def test_grid_of_tiles_multiplied_as_one_gemm_agrees_with_each_tiles_own_product(monkeypatch):
    """Programs reading a grid of A row blocks and B column blocks are multiplied by one GEMM
    (dot._grid_matmul).  BLAS may order that bigger call's K sums differently from a tile's own
    call (it does on OpenBLAS's Haswell and Zen kernels), so the paths agree within the fp32
    accumulation bound; with the one-GEMM path off, every program's product is the same BLAS
    call in both paths and the bits are the same."""
    import minitriton.dot as dot
    from kernels.tutorials import matmul_kernel, matmul_persistent
    used = []
    original = dot._grid_matmul
    monkeypatch.setattr(dot, "_grid_matmul", lambda *a: used.append(original(*a)) or used[-1])
    rng = np.random.default_rng(3)
    m, n, k = 256, 192, 320
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)

    def tiled():
        c = np.empty((m, n), np.float16)
        matmul_kernel[(mt.cdiv(m, 64) * mt.cdiv(n, 64),)](a, b, c, m, n, k, k, 1, n, 1, n, 1, BLOCK_SIZE_M=64,
                                                          BLOCK_SIZE_N=64, BLOCK_SIZE_K=32, GROUP_SIZE_M=2,
                                                          ACTIVATION="")
        return c

    def persistent():
        c = np.empty((m, n), np.float16)
        matmul_persistent[(5,)](a, b, c, m, n, k, NUM_SMS=5, BM=64, BN=64, BK=32)
        return c
    for run in (tiled, persistent):
        used.clear()
        lockstep, sequential = _both_paths(run)
        assert any(used), f"{run.__name__}: the one-GEMM path was not taken"
        assert_dot_close(lockstep, sequential, a, b, err_msg=run.__name__)
    monkeypatch.setattr(dot, "_grid_matmul", lambda *a: False)
    for run in (tiled, persistent):
        _same_bits(*_both_paths(run))


def test_assert_dot_close_holds_the_paths_to_the_accumulation_bound():
    """The check above can fail: a product off by more than the bound (here, one term of K
    dropped) is refused, one within a last-bit reordering is accepted."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((32, 64)).astype(np.float16)
    b = rng.standard_normal((64, 16)).astype(np.float16)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    whole = (a32 @ b32).astype(np.float16)
    reordered = (a32[:, ::-1] @ b32[::-1]).astype(np.float16)    # the same sum in another order
    assert_dot_close(whole, reordered, a, b)
    dropped = (a32[:, 1:] @ b32[1:]).astype(np.float16)
    with pytest.raises(AssertionError, match="accumulation_bound"):
        assert_dot_close(whole, dropped, a, b)
