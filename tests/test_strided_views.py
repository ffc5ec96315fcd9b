"""storage.as_strided: the windows every load and store reads through.  A view inside a flat
array's own memory is built by the ndarray constructor; anything else (memory past the array,
a strided array, a negative step, ml_dtypes' types) by numpy's as_strided.  Both must give the
same elements and the same writeability."""
import ml_dtypes
import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided as numpy_as_strided

from minitriton.storage import as_strided, window


def _cases():
    flat = np.arange(64, dtype=np.float32)
    yield "windows of a flat array", flat, (61, 4), (4, 4)
    yield "rows a stride apart", flat, (8, 8), (32, 4)
    yield "a view of a view", flat[5:], (3, 5), (20, 8)
    yield "zero-size", flat, (0, 4), (4, 4)
    yield "broadcast (stride 0)", flat, (3, 5), (0, 4)
    yield "past the array's own memory", np.arange(64, dtype=np.int32)[:10], (12,), (4,)
    yield "a strided array", np.arange(64, dtype=np.int64)[::2], (4, 3), (16, 16)
    yield "a negative step", np.arange(16, dtype=np.float64)[8:], (3,), (-8,)
    yield "bfloat16", np.arange(32, dtype=np.float32).astype(ml_dtypes.bfloat16), (5, 4), (4, 2)


@pytest.mark.parametrize("name, base, shape, strides", list(_cases()), ids=[c[0] for c in _cases()])
@pytest.mark.parametrize("writeable", [True, False])
def test_views_match_numpy(name, base, shape, strides, writeable):
    ours = as_strided(base, shape, strides, writeable=writeable)
    raw = base if base.dtype.isbuiltin == 1 else base.view(np.dtype(f"u{base.itemsize}"))
    want = numpy_as_strided(raw, shape=shape, strides=strides, writeable=writeable)
    assert ours.shape == tuple(shape) and ours.strides == tuple(strides) and ours.dtype == base.dtype
    assert np.array_equal(ours.view(raw.dtype) if base.dtype.isbuiltin != 1 else ours, want)
    assert ours.flags.writeable == want.flags.writeable


def test_a_window_writes_through_and_read_only_stays_read_only():
    flat = np.zeros(16, np.float32)
    w = window(flat, (1,), (4,))
    w[np.array([0, 8])] = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], np.float32)
    assert flat.tolist() == [1, 2, 3, 4, 0, 0, 0, 0, 5, 6, 7, 8, 0, 0, 0, 0]
    frozen = flat.copy()
    frozen.flags.writeable = False
    assert not window(frozen, (1,), (4,)).flags.writeable
    assert not as_strided(flat, (4, 4), (16, 4), writeable=False).flags.writeable
