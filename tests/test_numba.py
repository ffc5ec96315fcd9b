"""The numba half-precision conversions are bit-exact with numpy's, including NaN payloads."""
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
