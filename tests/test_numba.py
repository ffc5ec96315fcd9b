"""The numba loops: half-precision conversions bit-exact with numpy's (NaN payloads too), row
reductions with numpy's bits, the masked select."""
import math

import numpy as np

from minitriton import fast_loops as N


def _awkward_floats():
    rng = np.random.default_rng(0)
    scaled = [rng.standard_normal(1 << 15).astype(np.float32) * s for s in (1, 1e-5, 1e-7, 3e-8, 1e4, 7e4)]
    special = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 65504, 65519.99, 65520, 6e-8, 3e-8, 2.0 ** -25,
                        1.5 * 2.0 ** -24, 2.0 ** -14, 2.0 ** -14 * (1 - 2.0 ** -12)], np.float32)
    random_bits = rng.integers(0, 2 ** 32, 1 << 16, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return np.concatenate(scaled + [special, random_bits])


def test_float_to_half_matches_numpy_bit_for_bit():
    x = _awkward_floats()
    with np.errstate(all="ignore"):
        want = x.astype(np.float16)
    np.testing.assert_array_equal(N.float_to_half(x).view(np.uint16), want.view(np.uint16))
    np.testing.assert_array_equal(N.round_to_half(x).view(np.uint32), want.astype(np.float32).view(np.uint32))


def test_half_to_float_matches_numpy_for_every_half():
    h = np.arange(65536, dtype=np.uint16).view(np.float16)
    h = np.tile(h, 2)  # above the size where numba takes over
    np.testing.assert_array_equal(N.half_to_float(h).view(np.uint32), h.astype(np.float32).view(np.uint32))


def test_row_sums_have_numpys_bits_for_every_short_row_length():
    """row_sum replays numpy's pairwise order (eight running sums, a tree, the tail) step for
    step, so a reduction gives the same bits whichever loop runs it."""
    rng = np.random.default_rng(1)
    for n in (2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 100, 128):
        for dt in (np.float32, np.float64, np.int32, np.uint64):
            x = (rng.standard_normal(((1 << 14) // n + 3, n)) * 1000).astype(dt)
            got = N.row_sum(x)
            assert got is not None and got.dtype == dt
            np.testing.assert_array_equal(got, np.sum(x, axis=-1, dtype=dt))
            if dt is np.float32:
                assert np.array_equal(got.view(np.uint32), np.sum(x, axis=-1, dtype=dt).view(np.uint32))
    assert N.row_sum(np.ones((1 << 10, 129), np.float32)) is None        # numpy splits longer rows
    assert N.row_sum(np.ones((1 << 14, 64), np.float32)[:, ::2]) is None   # not contiguous
    assert N.row_sum(np.ones((64, 64), np.float32)) is None                # small: numpy's own loop


def test_row_extremes_are_fmax_and_fmin_and_leave_nans_to_numpy():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1 << 10, 64)).astype(np.float32)
    x[rng.random(x.shape) < 0.3] = -np.inf
    x[5] = -np.inf
    x[6] = np.inf
    for largest, ufunc in ((True, np.fmax), (False, np.fmin)):
        np.testing.assert_array_equal(N.row_extreme(x, largest), ufunc.reduce(x, axis=-1))
        ints = rng.integers(-100, 100, (1 << 10, 33)).astype(np.int8)
        np.testing.assert_array_equal(N.row_extreme(ints, largest), ufunc.reduce(ints, axis=-1))
    x[3, 7] = np.nan
    assert N.row_extreme(x, True) is None


def test_select_has_wheres_bits_with_either_side_one_value():
    rng = np.random.default_rng(3)
    cond = rng.random((64, 32, 16)) < 0.5
    for dt in (np.float32, np.float16, np.int64, np.int8):
        x, y = (rng.standard_normal(cond.shape).astype(dt) for _ in range(2))
        one, other = np.array([-3], dt), np.array([5], dt)
        for a, b in ((x, y), (x, one), (one, y), (one, other)):
            want = np.where(cond, a if a.size > 1 else a[0], b if b.size > 1 else b[0])
            got = N.select(cond, a, b)
            assert got.dtype == want.dtype and np.array_equal(got.view(np.uint8), want.view(np.uint8))


def test_round_to_half_has_the_bit_loops_answer_for_every_float32():
    """The fast float loop (Veltkamp's split) against the bit-level one on all 2^32 inputs, in
    slices; a NaN anywhere sends the whole block to the bit-level loop (payloads as numpy)."""
    words = np.arange(1 << 24, dtype=np.uint32)
    fast, exact = np.empty(1 << 24, np.float32), np.empty(1 << 24, np.float32)
    for top in range(0, 256, 5):        # every 5th slice of 2^24 values: all exponents, both signs
        x = (words | np.uint32(top << 24)).view(np.float32)
        N._round_half_split(x, fast)
        N._round_half(x, exact)
        keep = ~np.isnan(x)
        assert np.array_equal(fast.view(np.uint32)[keep], exact.view(np.uint32)[keep]), top
    x = np.full(1 << 15, 1.0, np.float32)
    x[7] = np.frombuffer(np.uint32(0x7FC00123).tobytes(), np.float32)[0]
    np.testing.assert_array_equal(N.round_to_half(x).view(np.uint32), x.astype(np.float16).astype(np.float32).view(np.uint32))


def test_bounds_is_min_and_max_as_python_ints():
    rng = np.random.default_rng(4)
    for c in (rng.integers(-2 ** 62, 2 ** 62, 301), np.array([5]), rng.integers(0, 9, (7, 3)),
              rng.integers(-5, 5, 40).astype(np.int32), rng.integers(0, 100, 50)[::3]):
        lo, hi = N.bounds(c)
        assert (lo, hi) == (int(c.min()), int(c.max())) and type(lo) is int and type(hi) is int


def test_compiled_erf_has_pythons_bits():
    x = np.concatenate([np.random.default_rng(5).standard_normal(1 << 16) * 4,
                        [0.0, -0.0, np.inf, -np.inf, 1e-300, -5e-324, 30.0, -30.0, 1e300]])
    for fast, slow in ((N.erf, math.erf), (N.erfc, math.erfc)):
        want = np.array([slow(v) for v in x])
        assert np.array_equal(fast(x).view(np.uint64), want.view(np.uint64))
        assert np.isnan(fast(np.array([np.nan])))[0]
