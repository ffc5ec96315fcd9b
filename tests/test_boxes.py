"""Box masks (minitriton/boxes.py): a compare of an affine block with a scalar, and `&` of such
compares, kept as per-program bounds.  Every test compares with box masks switched off (the
lanes built one by one): the same lanes, the same loads and stores to the bit, the same errors."""
import itertools

import numpy as np
import pytest

import minitriton as mt
import minitriton.language as tl
from minitriton import boxes, fast_loops, gathers
from minitriton.memory import OutOfBoundsError
from kernels.indexing import masked_matmul, transpose
from tests.switches import on_and_off


@pytest.fixture
def every_size(monkeypatch):
    """Box masks for compares of any size (by default only big ones are kept as bounds)."""
    monkeypatch.setattr(boxes, "MIN_LANES", 0)
    monkeypatch.setattr(boxes, "ACCESS_LANES", 0)


def both_ways(fn):
    return on_and_off(boxes.set_enabled, fn)


@mt.jit
def masks(O, M, N, K, BM: tl.constexpr, BN: tl.constexpr, FORM: tl.constexpr):
    """Stores the lanes of one of several mask forms, one block per program."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM) - 2
    rn = tl.program_id(1) * 3 + (BN - 1 - tl.arange(0, BN))          # steps down
    if FORM == 0:
        m = (rm[:, None] < M) & (rn[None, :] >= N)
    elif FORM == 1:
        m = (rm < M)[:, None] & (N > rn)[None, :]
    elif FORM == 2:
        m = (rm[:, None] <= M + tl.program_id(1)) & (rn[None, :] == K) & (rm[:, None] > 1)
    elif FORM == 3:
        m = (rm[:, None] >= M) & (rn[None, :] > tl.program_id(0))
    elif FORM == 4:
        m = ~((rm[:, None] < M) & (rn[None, :] < N))
    else:
        m = ((rm[:, None] < M) & (rn[None, :] < N)) | (rm[:, None] == 0)
    block = (tl.program_id(0) * tl.num_programs(1) + tl.program_id(1)) * BM * BN
    tl.store(O + block + tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :], m.to(tl.int8))


@pytest.mark.parametrize("form", range(6))
def test_box_masks_hold_the_lanes_a_lane_by_lane_mask_holds(every_size, form):
    for M, N, K in ((0, 0, 0), (5, 7, 3), (13, 2, 9), (40, 40, 40)):
        grid = (4, 3)
        out = lambda: (masks[grid](o := np.zeros(4 * 3 * 8 * 16, np.int8), M, N, K, BM=8, BN=16, FORM=form), o)[1]  # noqa: E731
        on, off = both_ways(out)
        np.testing.assert_array_equal(on, off)


def test_a_transpose_reads_and_writes_boxes_without_building_its_mask(every_size, spy, monkeypatch):
    import minitriton.tensor as tensor_module
    built = spy(tensor_module, "box_values")          # a box mask's lanes, built
    scanned = spy(fast_loops, "mask_boxes")     # a built mask, scanned for its boxes
    windows = spy(gathers, "masked_boxes")
    m, n = 300, 170
    x = np.random.default_rng(0).standard_normal((m, n)).astype(np.float32)
    y = np.zeros((n, m), np.float32)
    transpose[(mt.cdiv(m, 32), mt.cdiv(n, 32))](x, y, m, n, BM=32, BN=32)
    np.testing.assert_array_equal(y, x.T)
    assert len(windows) == 2 and all(w for w in windows)        # the load's and the store's boxes
    assert not built and not scanned


@pytest.mark.parametrize("shape", [(300, 170), (64, 64), (33, 1), (1, 95)])
def test_transpose_and_masked_matmul_give_the_same_bits_both_ways(every_size, shape):
    m, n = shape
    rng = np.random.default_rng(1)
    x = rng.standard_normal((m, n)).astype(np.float32)

    def run_transpose():
        y = np.full((n, m), 9.0, np.float32)
        transpose[(mt.cdiv(m, 32), mt.cdiv(n, 32))](x, y, m, n, BM=32, BN=32)
        return y
    on, off = both_ways(run_transpose)
    np.testing.assert_array_equal(on, off)
    np.testing.assert_array_equal(on, x.T)
    k = 45
    a, b = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)

    def run_matmul():
        c = np.zeros((m, n), np.float32)
        masked_matmul[(mt.cdiv(m, 16) * mt.cdiv(n, 16),)](a, b, c, m, n, k, BM=16, BN=16, BK=16)
        return c
    on, off = both_ways(run_matmul)
    np.testing.assert_array_equal(on.view(np.uint32), off.view(np.uint32))
    np.testing.assert_allclose(on, a @ b, rtol=1e-2, atol=5e-2)     # (tl.dot of fp32: tf32 by default)


@mt.jit
def shifted(X, Y, M, BM: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM) + 2_147_483_600      # lanes past int32's end
    tl.store(Y + tl.program_id(0) * BM + tl.arange(0, BM), (rm < M).to(tl.int32))


def test_no_box_where_a_lane_would_wrap_around(every_size, spy):
    """An int32 block whose lanes pass 2**31 - 1 wraps in Triton; its bounds would not, so the
    compare takes the lane-by-lane path."""
    made = spy(boxes, "box_compare")
    on, off = both_ways(lambda: (shifted[(4,)](None, y := np.zeros(4 * 64, np.int32), 2_147_483_647, BM=64), y)[1])
    np.testing.assert_array_equal(on, off)
    assert not any(r is not None for r in made)


@mt.jit
def unmasked_edge(X, Y, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    mask = (rm[:, None] < M + 4) & (rn[None, :] < N)            # keeps four rows past the end
    tl.store(Y + rm[:, None] * N + rn[None, :], tl.load(X + rm[:, None] * N + rn[None, :], mask=mask), mask=mask)


def test_a_kept_lane_out_of_bounds_is_refused_alike(every_size):
    x = np.ones((20, 8), np.float32)

    def run():
        y = np.zeros((20, 8), np.float32)
        try:
            unmasked_edge[(3,)](x, y, 20, 8, BM=8, BN=8)
        except OutOfBoundsError as e:
            return str(e).split("\n")[0]
        return "no error"
    on, off = both_ways(run)
    assert on == off and "out of bounds" in on and "'X'" in on


def test_box_and_widens_an_axis_a_mask_holds_once(every_size):
    """`&` of a (BM, 1) box and a (1, BN) box is their product; with a program keeping nothing
    of one, nothing of the other."""
    for M, N in itertools.product((0, 3, 8, 30), (0, 5, 16)):
        on, off = both_ways(lambda: (masks[(4, 3)](o := np.zeros(4 * 3 * 8 * 16, np.int8), M, N, 0, BM=8, BN=16,
                                                   FORM=1), o)[1])
        np.testing.assert_array_equal(on, off)


def test_small_accesses_go_lane_by_lane_with_the_same_answer(spy, monkeypatch):
    """Below boxes.ACCESS_LANES a masked access builds its lanes (cheaper there than finding
    boxes); the answer is the boxes' answer."""
    windows = spy(gathers, "masked_boxes")
    m, n = 40, 30
    x = np.random.default_rng(2).standard_normal((m, n)).astype(np.float32)

    def run():
        y = np.full((n, m), 9.0, np.float32)
        transpose[(mt.cdiv(m, 16), mt.cdiv(n, 16))](x, y, m, n, BM=16, BN=16)
        return y
    small = run()
    assert not windows
    monkeypatch.setattr(boxes, "ACCESS_LANES", 0)
    monkeypatch.setattr(boxes, "MIN_LANES", 0)
    boxed = run()
    assert windows
    np.testing.assert_array_equal(small, boxed)
    np.testing.assert_array_equal(small, x.T)
