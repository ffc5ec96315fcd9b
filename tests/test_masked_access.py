"""Loads and stores under a mask that keeps a box of every program's block (a row that does not
fill its block, a tile's ragged edge) read and write a window of the box: the same values as
the lane-by-lane path, `other` where masked, nothing written outside, out-of-bounds kept lanes
still refused."""
import numpy as np
import pytest

import minitriton as mt
import minitriton.language as tl
from minitriton import boxes as box_masks, gathers, memory
from minitriton.memory import OutOfBoundsError
from kernels.indexing import masked_matmul


@pytest.fixture(autouse=True)
def windows_at_every_size(monkeypatch):
    """These tests are about reading a built mask's boxes as windows, at every size (accesses below
    boxes.ACCESS_LANES go lane by lane), with masks built lane by lane (box masks kept as bounds
    have tests of their own, tests/test_boxes.py)."""
    monkeypatch.setattr(box_masks, "ACCESS_LANES", 0)
    monkeypatch.setattr(box_masks, "_enabled", False)


@mt.jit
def copy_rows(src, dst, stride, n, OTHER: tl.constexpr, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    x = tl.load(src + tl.program_id(0) * stride + cols, mask=cols < n, other=OTHER)
    tl.store(dst + tl.program_id(0) * BLOCK + cols, x)
    tl.store(src + tl.program_id(0) * stride + cols, x * 2, mask=cols < n)


@mt.jit
def copy_tile(src, dst, M, N, LO: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)[:, None]
    cols = tl.arange(0, BN)[None, :]
    keep = (rows < M) & (cols < N) & (cols >= LO)
    x = tl.load(src + tl.program_id(0) * M * N + rows * N + cols, mask=keep, other=-1.0)
    tl.store(dst + tl.program_id(0) * BM * BN + rows * BN + cols, x)


@mt.jit
def holes(src, dst, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    x = tl.load(src + tl.program_id(0) * BLOCK + cols, mask=cols % 3 != 1, other=7.0)
    tl.store(dst + tl.program_id(0) * BLOCK + cols, x)


@pytest.mark.parametrize("n", [781, 1024, 1, 0])
def test_a_row_shorter_than_its_block(n, monkeypatch):
    rows, block = 37, 1024
    src = np.random.default_rng(0).standard_normal((rows, n)).astype(np.float32)
    keep = src.copy()
    boxes = []
    found = gathers.masked_boxes
    monkeypatch.setattr(gathers, "masked_boxes", lambda p, m: boxes.append(found(p, m)) or boxes[-1])
    dst = np.full((rows, block), np.nan, np.float32)
    copy_rows[(rows,)](src, dst, n, n, OTHER=-3.5, BLOCK=block)
    want = np.full((rows, block), -3.5, np.float32)
    want[:, :n] = keep
    np.testing.assert_array_equal(dst, want)
    np.testing.assert_array_equal(src, keep * 2)      # the last row's lanes past the array are not written
    if 0 < n < block:   # the box path took both accesses (a full row has no mask)
        assert len(boxes) == 2 and all(b and b[0][1] is not None for b in boxes)
    if n == 0:          # the load's box is empty (the store, masked per program, never asks)
        assert boxes == [[]]


@pytest.mark.parametrize("M, N, LO", [(5, 7, 0), (8, 8, 3), (1, 16, 15)])
def test_a_tile_box(M, N, LO):
    progs, bm, bn = 3, 8, 16
    src = np.arange(progs * M * N, dtype=np.float32).reshape(progs, M, N)
    dst = np.zeros((progs, bm, bn), np.float32)
    copy_tile[(progs,)](src, dst, M, N, LO=LO, BM=bm, BN=bn)
    want = np.full((progs, bm, bn), -1.0, np.float32)
    want[:, :M, LO:N] = src[:, :, LO:]
    np.testing.assert_array_equal(dst, want)


@mt.jit
def scale_tiles(src, dst, M, N, TRIANGLE: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    tiles_n = tl.cdiv(N, BN)
    rows = tl.program_id(0) // tiles_n * BM + tl.arange(0, BM)[:, None]
    cols = tl.program_id(0) % tiles_n * BN + tl.arange(0, BN)[None, :]
    keep = (rows < M) & (cols < N)
    if TRIANGLE:
        keep = keep & (cols <= rows)
    x = tl.load(src + rows * N + cols, mask=keep, other=-5.0)
    tl.store(dst + rows * N + cols, x * 2.0 + 1.0, mask=keep)


@pytest.mark.parametrize("M, N, triangle", [(37, 50, False), (64, 64, False), (5, 70, False), (37, 50, True)])
def test_edge_tiles_each_with_their_own_box(M, N, triangle, monkeypatch):
    """A matmul's edge tiles keep a smaller box than the inner ones: one window per distinct box.
    A triangle is no box: the lane-by-lane path, with the same answer."""
    bm, bn = 16, 32
    src = np.random.default_rng(1).standard_normal((M, N)).astype(np.float32)
    dst = np.full((M, N), np.nan, np.float32)
    boxes = []
    found = gathers.masked_boxes
    monkeypatch.setattr(gathers, "masked_boxes", lambda p, m: boxes.append(found(p, m)) or boxes[-1])
    scale_tiles[(-(-M // bm) * -(-N // bn),)](src, dst, M, N, TRIANGLE=triangle, BM=bm, BN=bn)
    want = src * 2 + 1
    if triangle:
        want = np.where(np.arange(N)[None, :] <= np.arange(M)[:, None], want, np.nan)
    np.testing.assert_array_equal(dst, want)
    if triangle:
        assert boxes and all(b is None for b in boxes)
    elif M % bm or N % bn:
        assert boxes and all(b is not None and len(b) > 1 for b in boxes)      # several distinct boxes


@mt.jit
def overlapping_boxes(dst, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    rows = tl.arange(0, BLOCK)[:, None]
    cols = tl.arange(0, BLOCK)[None, :]
    value = tl.zeros((BLOCK, BLOCK), tl.float32) + pid
    tl.store(dst + rows * BLOCK + cols, value, mask=(rows < BLOCK - pid) & (cols >= pid % 3))


def test_programs_storing_overlapping_boxes_write_in_program_order():
    """Every program writes a different box of the same tile: the later program's value stays
    wherever boxes overlap, as when the programs run one after another."""
    lockstep, alone = np.full((8, 8), -1.0, np.float32), np.full((8, 8), -1.0, np.float32)
    overlapping_boxes[(6,)](lockstep, BLOCK=8)
    with mt.one_program_at_a_time():
        overlapping_boxes[(6,)](alone, BLOCK=8)
    np.testing.assert_array_equal(lockstep, alone)
    assert lockstep[0, 7] == 5 and lockstep[7, 0] == 0


def test_a_mask_with_holes_takes_the_lane_by_lane_path():
    src = np.arange(4 * 64, dtype=np.float32)
    dst = np.zeros_like(src)
    holes[(4,)](src, dst, BLOCK=64)
    lanes = np.arange(4 * 64) % 64
    np.testing.assert_array_equal(dst, np.where(lanes % 3 != 1, src, 7.0))


def test_a_block_stored_elsewhere_keeps_the_values_it_was_loaded_with():
    """x = load(src); store(dst, x); store(src, 2 * x): dst gets x.  dst's store is only logged
    until the launch ends, holding a view of src's memory, so src must not be written back first."""
    rows, block = 8, 1024
    src = np.arange(rows * block, dtype=np.float32).reshape(rows, block)
    keep = src.copy()
    dst = np.zeros_like(src)
    copy_rows[(rows,)](src, dst, block, block, OTHER=0.0, BLOCK=block)
    np.testing.assert_array_equal(dst, keep)
    np.testing.assert_array_equal(src, keep * 2)


def test_a_kept_lane_out_of_bounds_is_still_refused():
    src = np.zeros((4, 100), np.float32)
    dst = np.zeros((4, 128), np.float32)
    with pytest.raises(OutOfBoundsError, match="src"):
        copy_rows[(4,)](src, dst, 100, 120, OTHER=0.0, BLOCK=128)     # lanes 100-119 of the last row
    np.testing.assert_array_equal(dst, 0)


def test_edge_masked_tiles_shared_by_a_row_of_programs_are_read_once(spy):
    """A matmul masking its edges: the programs of one row of tiles load the same A box (its
    edge tiles too), read once and multiplied as one GEMM over the distinct blocks; the answer
    is each program's own product (one program at a time), within the fp32 accumulation bound."""
    used = spy(gathers, "shared_boxes")
    rng = np.random.default_rng(7)
    m, n, k = 70, 45, 40
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    grid = (mt.cdiv(m, 16) * mt.cdiv(n, 16),)
    together = np.zeros((m, n), np.float32)
    masked_matmul[grid](a, b, together, m, n, k, BM=16, BN=16, BK=16)
    assert any(u is not None for u in used), "the row's programs should share their A boxes"
    alone = np.zeros((m, n), np.float32)
    with mt.one_program_at_a_time():
        masked_matmul[grid](a, b, alone, m, n, k, BM=16, BN=16, BK=16)
    assert masked_matmul.last_launch["path"].startswith("one program at a time")
    want = a.astype(np.float64) @ b.astype(np.float64)
    bound = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)) * k * 2.0 ** -23
    assert (np.abs(together - alone) <= 2 * bound).all()
    assert (np.abs(together - want) <= bound).all()
