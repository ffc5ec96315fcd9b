"""Every library kernel against its float64 reference over many configs (lecture §2.1).

Tolerance: the output is rounded to its dtype (fp16 for the matmul family: half an fp16 ulp)
after an fp32 accumulation whose error is at most K·2⁻²⁴·Σ|a||b| for any summation order;
configs must agree to one output ulp except where that fp32 bound dominates (near zero).
"""
import numpy as np
import pytest
import ml_dtypes

import kernels
from kernels import gemm as mm, conv as cv, rowsum as rd, rowsoftmax as sm
from minitriton.testing import check_configs, accumulation_bound

MATMUL_CONFIGS = [
    dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8, SPLIT_K=1),
    dict(BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, GROUP_M=1, SPLIT_K=1),
    dict(BLOCK_M=128, BLOCK_N=32, BLOCK_K=64, GROUP_M=4, SPLIT_K=1),
    dict(BLOCK_M=32, BLOCK_N=128, BLOCK_K=16, GROUP_M=2, SPLIT_K=1),
    dict(BLOCK_M=32, BLOCK_N=64, BLOCK_K=32, GROUP_M=8, SPLIT_K=4),
    dict(BLOCK_M=64, BLOCK_N=32, BLOCK_K=64, GROUP_M=1, SPLIT_K=4),
    dict(BLOCK_M=16, BLOCK_N=32, BLOCK_K=16, GROUP_M=2, SPLIT_K=16),
    dict(BLOCK_M=32, BLOCK_N=16, BLOCK_K=128, GROUP_M=32, SPLIT_K=16),
    dict(BLOCK_M=256, BLOCK_N=16, BLOCK_K=32, GROUP_M=16, SPLIT_K=2),
]


def _operands(rng, M, N, K, dtype=np.float16):
    return rng.standard_normal((M, K)).astype(dtype), rng.standard_normal((K, N)).astype(dtype)


@pytest.mark.parametrize("shape", [(200, 300, 100), (96, 80, 2048), (64, 64, 64)])
def test_matmul_configs_match_reference(shape):
    M, N, K = shape
    a, b = _operands(np.random.default_rng(1), M, N, K)
    res = check_configs(lambda cfg: mm.matmul(a, b, config=cfg), MATMUL_CONFIGS, mm.reference(a, b),
                        abs_tol=accumulation_bound(a, b))
    assert len(res.configs) >= 8
    assert all(o.dtype == np.float16 for o in res.outputs)
    # the error really is fp16 output rounding: about 2^-11 relative, not more
    ref = mm.reference(a, b)
    rel = np.abs(res.outputs[0] - ref) / np.maximum(np.abs(ref), 1.0)
    assert 1e-4 < rel.max() < 2.0 ** -10


def test_check_configs_rejects_a_wrong_config():
    a, b = _operands(np.random.default_rng(2), 64, 48, 32)

    def run(cfg):
        out = mm.matmul(a, b, config=cfg)
        return out * np.float16(1.01) if cfg["SPLIT_K"] == 4 else out

    with pytest.raises(AssertionError, match="SPLIT_K': 4"):
        check_configs(run, MATMUL_CONFIGS[:6], mm.reference(a, b), abs_tol=accumulation_bound(a, b))


def test_matmul_bias_relu_fused_and_unfused():
    rng = np.random.default_rng(3)
    a, b = _operands(rng, 200, 300, 100)
    bias = rng.standard_normal(300).astype(np.float16)
    ref = mm.reference(a, b, bias, "relu")
    # unfused, C is rounded to fp16 before the bias pass rounds again: one more half ulp
    extra_rounding = 0.5 * np.spacing(np.abs(a.astype(np.float64) @ b).astype(np.float16)).astype(np.float64)
    for fuse in (True, False):
        tol = accumulation_bound(a, b) + (0 if fuse else extra_rounding)
        res = check_configs(lambda cfg: mm.matmul(a, b, bias, "relu", config=cfg, fuse_epilogue=fuse),
                            MATMUL_CONFIGS[::2], ref, abs_tol=tol)
        assert (res.outputs[0] >= 0).all() and (res.outputs[0] == 0).mean() > 0.3


def test_weight_gradient_through_strides_needs_no_copy():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2048, 96)).astype(np.float16)    # tokens x in_features
    dy = rng.standard_normal((2048, 80)).astype(np.float16)   # tokens x out_features
    xt = x.T                                                  # a view: strides swapped, nothing copied
    assert np.shares_memory(xt, x) and not xt.flags.c_contiguous
    ref = mm.reference(xt, dy)
    check_configs(lambda cfg: mm.matmul(xt, dy, config=cfg), MATMUL_CONFIGS[4:8], ref,
                  abs_tol=accumulation_bound(xt, dy))


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16])
def test_matmul_other_dtypes(dtype):
    a, b = _operands(np.random.default_rng(5), 96, 64, 80, dtype)
    c = mm.matmul(a, b, config=MATMUL_CONFIGS[0])
    assert c.dtype == dtype
    ref = mm.reference(a, b)
    out_eps = np.finfo(dtype).eps if dtype is np.float32 else 2.0 ** -8
    # fp32 inputs go through tf32 (as in Triton): 10-bit mantissas, so about 2^-11 relative per product
    in_eps = 2.0 ** -11 if dtype is np.float32 else 0.0
    bound = accumulation_bound(a, b) * (1 + in_eps / 2.0 ** -24 / 80) + out_eps * np.abs(ref)
    assert (np.abs(c.astype(np.float64) - ref) <= bound).all()


def test_matmul_rejects_bad_operands():
    a = np.zeros((4, 5), np.float16)
    with pytest.raises(ValueError, match="inner dimensions"):
        mm.matmul(a, np.zeros((4, 5), np.float16))
    with pytest.raises(TypeError, match="share a dtype"):
        mm.matmul(a, np.zeros((5, 3), np.float32))
    with pytest.raises(ValueError, match="'bias'"):
        mm.matmul(a, np.zeros((5, 3), np.float16), bias=np.zeros(4, np.float16))
    with pytest.raises(ValueError, match="'activation'"):
        mm.matmul(a, np.zeros((5, 3), np.float16), activation="gelu")


ROWSUM_CONFIGS = [dict(BLOCK_N=bn, SPLIT=s) for bn, s in
                  [(128, 1), (1024, 1), (4096, 1), (256, 4), (512, 8), (128, 16), (2048, 32), (1024, 64)]]


def test_row_sum_configs():
    x = np.random.default_rng(6).standard_normal((9, 50_001)).astype(np.float16)
    tol = x.shape[1] * 2.0 ** -24 * np.abs(x.astype(np.float64)).sum(1)
    res = check_configs(lambda cfg: rd.row_sum(x, cfg), ROWSUM_CONFIGS, rd.reference(x), abs_tol=tol)
    assert res.outputs[0].dtype == np.float32


SOFTMAX_CONFIGS = [dict(ROWS=r, num_warps=w) for r in (1, 2, 4, 8, 16) for w in (4, 8)][:8]


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_softmax_configs(dtype):
    x = (np.random.default_rng(7).standard_normal((37, 781)) * 4).astype(dtype)
    ref = sm.reference(x)
    tol = 4 * x.shape[1] * 2.0 ** -24 * np.abs(ref)  # exp, division and an fp32 sum over the row
    res = check_configs(lambda cfg: sm.softmax(x, cfg), SOFTMAX_CONFIGS, ref, abs_tol=tol, ulps=0)
    np.testing.assert_allclose(res.outputs[0].astype(np.float64).sum(1), 1.0, rtol=2e-3 if dtype == np.float16 else 1e-5)


def test_softmax_of_nothing_is_nothing_and_bad_layouts_are_named():
    for shape in ((0, 100), (3, 0)):
        assert sm.softmax(np.zeros(shape, np.float32)).shape == shape     # (refused before, as "not 2-D")
    with pytest.raises(ValueError, match="must be a 2-D numpy array, got \\(2, 3, 4\\)"):
        sm.softmax(np.zeros((2, 3, 4), np.float32))
    with pytest.raises(ValueError, match="must have contiguous rows, got strides \\(24, 8\\)"):
        sm.softmax(np.zeros((4, 6), np.float32)[:, ::2])


CONV_CONFIGS = [dict(c, BLOCK_K=min(c["BLOCK_K"], 64)) for c in MATMUL_CONFIGS[:8]]


@pytest.mark.parametrize("stride,padding", [(1, 1), (2, 0), ((2, 1), (0, 2))])
def test_conv2d_configs(stride, padding):
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 11, 9, 12)).astype(np.float16)
    w = rng.standard_normal((3, 3, 12, 24)).astype(np.float16)
    bias = rng.standard_normal(24).astype(np.float16)
    ref = cv.reference(x, w, bias, stride, padding, "relu")
    absx = np.abs(x.astype(np.float64))
    tol = 108 * 2.0 ** -24 * (cv.reference(absx, np.abs(w.astype(np.float64)), None, stride, padding) + 1.0)
    res = check_configs(lambda cfg: cv.conv2d(x, w, bias, stride, padding, "relu", config=cfg), CONV_CONFIGS, ref,
                        abs_tol=tol)
    assert res.outputs[0].shape == cv.output_shape(x.shape, w.shape, stride, padding)


def test_conv2d_rejects_bad_input():
    x = np.zeros((1, 4, 4, 3), np.float16)
    with pytest.raises(ValueError, match="channels"):
        cv.conv2d(x, np.zeros((3, 3, 2, 4), np.float16))
    with pytest.raises(ValueError, match="'stride'"):
        cv.conv2d(x, np.zeros((3, 3, 3, 4), np.float16), stride=(1, 2, 3))
    with pytest.raises(ValueError, match="does not fit"):
        cv.conv2d(x, np.zeros((5, 5, 3, 4), np.float16))


def test_library_spaces():
    assert mm.SPACE.size == 157_500
    for cfg in MATMUL_CONFIGS:
        assert cfg_in(mm.SPACE, cfg)
    assert kernels.matmul is mm.matmul


def cfg_in(space, cfg):
    return {**cfg, "num_warps": 4, "num_stages": 3} in space


def test_testing_offers_its_own_names_and_tritons_assert_close():
    from minitriton import testing
    assert set(dir(testing)) == set(testing.__all__) and not {"np", "dataclasses", "Callable"} & set(dir(testing))
    testing.assert_close(np.float32([1.0, 2.0]), np.float32([1.0, 2.005]))            # atol 1e-2 by default
    with pytest.raises(AssertionError):
        testing.assert_close(np.float32([1.0]), np.float32([1.02]))
    testing.assert_close(np.float32([np.nan, 1]), np.float32([np.nan, 1]), atol=0)     # NaN equals NaN
    testing.assert_close(np.float16([100]), np.float16([101]), atol=lambda dt: 0.0, rtol=0.02)


def test_the_ragged_benchmark_kernels_give_numpys_answers():
    """benchmarks/ragged.py's kernels (tutorials at shapes that do not fill their blocks, an
    embedding gather, a tiled transpose) at its quick shapes, within its tolerances."""
    from benchmarks import ragged
    for name, size, kernel_fn, numpy_fn, tol in ragged.cases(quick=True):
        got, want = np.asarray(kernel_fn(), np.float64), np.asarray(numpy_fn(), np.float64)
        assert got.shape == want.shape, name
        assert np.abs(got - want).max() <= tol, f"{name} at {size}"
