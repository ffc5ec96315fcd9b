"""Generated operators (issue 11): a te computation becomes minitriton kernels, one per sketch,
whose numbers match a float64 evaluation of the expression and whose stated launch profiles
match what the executor counts."""
import numpy as np
import pytest

from autotune import te, Task, tune
from autotune.codegen import Unsupported
from minitriton.hypogpu import oracle
from minitriton.hypogpu.trace import trace
from minitriton.testing import check_configs, accumulation_bound
from tests.test_kernels import MATMUL_CONFIGS
from tests.test_profiles import _check

M, N, K = te.var("M"), te.var("N"), te.var("K")


def _matmul(a_transposed=False, b_transposed=False, epilogue=None, dtype="float16"):
    A = te.placeholder((K, M) if a_transposed else (M, K), dtype, name="A")
    B = te.placeholder((N, K) if b_transposed else (K, N), dtype, name="B")
    k = te.reduce_axis(K, name="k")
    C = te.compute((M, N), lambda m, n: te.sum((A[k, m] if a_transposed else A[m, k]) *
                                               (B[n, k] if b_transposed else B[k, n]), axis=k), name="C")
    return te.generate(C if epilogue is None else epilogue(C))


def _bias_gelu(C):
    bias = te.placeholder((N,), "float16", name="bias")
    return te.compute((M, N), lambda m, n: te.gelu(C[m, n] * 0.5 + bias[n]), name="D")


def _row_scale_relu(C):
    scale = te.placeholder((M,), "float16", name="scale")
    return te.compute((M, N), lambda m, n: te.relu(C[m, n] * scale[m]), name="D")


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True)])
def test_matmul_any_transposition_matches_reference(ta, tb):
    op = _matmul(ta, tb)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((200, 100)).astype(np.float16)
    b = rng.standard_normal((100, 150)).astype(np.float16)
    args = (np.ascontiguousarray(a.T) if ta else a, np.ascontiguousarray(b.T) if tb else b)
    ref = op.reference(*args)
    np.testing.assert_allclose(ref, a.astype(np.float64) @ b, rtol=1e-12)
    check_configs(lambda cfg: op(*args, config=cfg), MATMUL_CONFIGS, ref, abs_tol=accumulation_bound(a, b))


@pytest.mark.parametrize("epilogue", [_bias_gelu, _row_scale_relu])
def test_fused_epilogues_match_reference(epilogue):
    op = _matmul(epilogue=epilogue)
    rng = np.random.default_rng(1)
    a = rng.standard_normal((130, 70)).astype(np.float16)
    b = rng.standard_normal((70, 90)).astype(np.float16)
    side = rng.standard_normal(130 if epilogue is _row_scale_relu else 90).astype(np.float16)
    ref = op.reference(a, b, side)
    tol = 2 * accumulation_bound(a, b) * (1 + np.abs(side).max())
    res = check_configs(lambda cfg: op(a, b, side, config=cfg), MATMUL_CONFIGS[::2], ref, abs_tol=tol)
    assert res.outputs[0].dtype == np.float16


@pytest.mark.parametrize("cfg", [MATMUL_CONFIGS[0], MATMUL_CONFIGS[4], MATMUL_CONFIGS[7]])
def test_stated_profile_matches_the_traced_one(cfg):
    op = _matmul(True, epilogue=_bias_gelu)
    a = np.zeros((50, 130), np.float16)          # transposed: K x M
    b = np.zeros((50, 70), np.float16)
    bias = np.zeros(70, np.float16)
    cfg = dict(cfg, num_warps=4, num_stages=3)
    _check(op.launch_profile(dict(M=130, N=70, K=50), cfg), trace(op, a, b, bias, config=cfg))


def test_sketches_sources_and_tuning():
    op = _matmul()
    assert "tl.dot" in op.sketches[0].source and "def te_C_reduce" in op.sketches[1].source
    assert [s.name for s in Task(op, M=4096, N=4096, K=4096).sketches] == ["tiled"]
    wgrad = Task(op, M=512, N=512, K=32768)
    assert [s.name for s in wgrad.sketches] == ["tiled", "tiled + rfactor"]
    assert wgrad.sketches[1].source.count("@mt.jit") == 2
    result = tune(wgrad, "ansor", budget=96, seed=0)
    truth = oracle(wgrad)
    assert truth.best_config.kwargs["SPLIT_K"] > 1                           # the rfactor sketch holds the best
    assert truth.best_time / truth.time_of(result.best_config) > 0.9
    relu = _matmul(epilogue=lambda C: te.compute((M, N), lambda m, n: te.relu(C[m, n]), name="R"))
    text = str(Task(relu, M=4096, N=4096, K=4096).sketches)
    assert "tiled, fused epilogue" in text and "cache write + separate epilogue      not generated" in text


def test_what_cannot_be_generated_is_named():
    X = te.placeholder((M, K), "float32", name="X")
    W = te.placeholder((K, N), "float32", name="W")
    k = te.reduce_axis(K, name="k")
    with pytest.raises(Unsupported, match=r"W\[k, n\]"):
        te.generate(te.compute((M, N), lambda m, n: te.sum(X[m, k] + W[k, n], axis=k), name="S"))
    X3 = te.placeholder((M, N, K), "float32", name="X3")
    with pytest.raises(Unsupported, match=r"X3\[m, n, k\]"):
        te.generate(te.compute((M, N), lambda m, n: te.sum(X3[m, n, k], axis=k), name="S2"))
    shifted = te.compute((M, N), lambda m, n: te.sum(X[m, k] * W[k, n], axis=k), name="C")
    with pytest.raises(Unsupported, match="shifted"):
        te.generate(te.compute((M, N), lambda m, n: shifted[m, n + 1], name="D"))
    with pytest.raises(ValueError, match="dtype"):
        te.placeholder((M,), "int4", name="bad")
    with pytest.raises(TypeError, match="fcompute"):
        te.compute((M,), 3)


@pytest.mark.parametrize("kind", ["sum", "max"])
@pytest.mark.parametrize("transposed", [False, True])
def test_reductions_over_either_axis(kind, transposed):
    X = te.placeholder((N, M) if transposed else (M, N), "float16", name="X")
    r = te.reduce_axis(N, name="r")
    f = te.sum if kind == "sum" else te.max
    R = te.compute((M,), lambda m: f(X[r, m] if transposed else X[m, r], axis=r), name="R", dtype="float32")
    op = te.generate(R)
    x = np.random.default_rng(4).standard_normal((300, 37) if transposed else (37, 300)).astype(np.float16)
    ref = op.reference(x)
    tol = 300 * 2.0 ** -24 * np.abs(x.astype(np.float64)).sum(0 if transposed else 1)
    for cfg in (dict(BLOCK_N=128, SPLIT=1, num_warps=4, num_stages=2), dict(BLOCK_N=256, SPLIT=4, num_warps=2,
                                                                              num_stages=1)):
        np.testing.assert_array_less(np.abs(op(x, config=cfg) - ref), tol + 1e-30)
        _check(op.launch_profile(dict(M=37, N=300), cfg), trace(op, x, config=cfg))
    rows = Task(op, M=16, N=1_000_000).sketches
    assert [s.name for s in rows] == ["one program per row", "rfactor"] and "def te_R_partials" in rows[1].source
    assert [s.name for s in Task(op, M=4096, N=1024).sketches] == ["one program per row"]


def test_autotuned_operator_tunes_each_shape_bucket_once_and_caches_on_disk(tmp_path):
    op = _matmul(epilogue=_row_scale_relu)
    tuned = op.autotuned(budget=12, cache_dir=tmp_path)
    rng = np.random.default_rng(5)

    def call(m):
        a = rng.standard_normal((m, 64)).astype(np.float16)
        b = rng.standard_normal((64, 48)).astype(np.float16)
        s = rng.standard_normal(m).astype(np.float16)
        y = tuned(a, b, s)
        ref = op.reference(a, b, s)
        half_ulp = 0.5 * np.spacing(np.abs(ref).astype(np.float16)).astype(np.float64)
        assert (np.abs(y - ref) <= half_ulp + accumulation_bound(a, b) * (1 + np.abs(s).max())).all()
        return tuned.last_tuning
    first = call(100)
    assert first is not None and first.measured == 12
    assert call(120) is first                           # M = 120 falls in the same bucket (128)
    assert call(300) is not first                       # a new bucket: tuned again
    again = op.autotuned(budget=12, cache_dir=tmp_path)
    again(rng.standard_normal((128, 64)).astype(np.float16), rng.standard_normal((64, 48)).astype(np.float16),
          rng.standard_normal(128).astype(np.float16))
    assert again.last_tuning is None                   # served from the disk cache
    assert again.configs[(("K", 64), ("M", 128), ("N", 48))] == tuned.configs[(("K", 64), ("M", 128), ("N", 48))]


def _conv(stride, pad, condition=None):
    Nb, H, W, C, F = (te.var(v) for v in ("Nb", "H", "W", "C", "F"))
    X = te.placeholder((Nb, H, W, C), "float16", name="X")
    Wt = te.placeholder((3, 3, C, F), "float16", name="Wt")
    bias = te.placeholder((F,), "float16", name="bias")
    cond = condition or (lambda h, w: te.all(h >= pad, h < H + pad, w >= pad, w < W + pad))
    Xp = te.compute((Nb, H + 2 * pad, W + 2 * pad, C),
                    lambda n, h, w, c: te.if_then_else(cond(h, w), X[n, h - pad, w - pad, c], 0), name="Xp")
    kh, kw, c = te.reduce_axis(3, "kh"), te.reduce_axis(3, "kw"), te.reduce_axis(C, "c")
    OH, OW = (H + 2 * pad - 3) // stride + 1, (W + 2 * pad - 3) // stride + 1
    Y = te.compute((Nb, OH, OW, F), lambda n, oh, ow, f: te.relu(
        te.sum(Xp[n, oh * stride + kh, ow * stride + kw, c] * Wt[kh, kw, c, f], axis=[kh, kw, c]) + bias[f]), name="Y")
    return te.generate(Y)


@pytest.mark.parametrize("stride,pad", [(1, 1), (2, 1), (1, 0)])
def test_conv2d_as_an_index_expression(stride, pad):
    from kernels import conv
    op = _conv(stride, pad)
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 11, 9, 12)).astype(np.float16)
    w = rng.standard_normal((3, 3, 12, 24)).astype(np.float16)
    b = rng.standard_normal(24).astype(np.float16)
    ref = op.reference(x, w, b)
    np.testing.assert_allclose(ref, conv.reference(x, w, b, stride=stride, padding=pad, activation="relu"), atol=1e-9)
    cfgs = [MATMUL_CONFIGS[0], MATMUL_CONFIGS[4], MATMUL_CONFIGS[6]]
    half_ulp = 0.5 * np.spacing(np.abs(ref).astype(np.float16)).astype(np.float64)
    for cfg in cfgs:
        y = op(x, w, b, config=cfg).astype(np.float64)
        assert (np.abs(y - ref) <= half_ulp + 1e-3).all()
        cfg = dict(cfg, num_warps=4, num_stages=3)
        _check(op.launch_profile(dict(Nb=2, H=11, W=9, C=12, F=24), cfg), trace(op, x, w, b, config=cfg))
    layer = Task(op, Nb=16, H=7, W=7, C=512, F=512)
    assert [s.name.split(",")[0] for s in layer.sketches][0] == "tiled"


def test_conv_padding_must_be_the_inputs_bounds():
    with pytest.raises(Unsupported, match="bounds"):
        _conv(1, 1, condition=lambda h, w: te.all(h >= 1, w >= 1))     # upper bounds missing: refused


@pytest.mark.parametrize("shared_b", [False, True])
def test_batched_matmul(shared_b):
    Bt = te.var("Bt")
    A = te.placeholder((Bt, M, K), "float16", name="A")
    B = te.placeholder((K, N) if shared_b else (Bt, K, N), "float16", name="B")
    k = te.reduce_axis(K, name="k")
    C = te.compute((Bt, M, N), lambda b, m, n: te.sum(A[b, m, k] * (B[k, n] if shared_b else B[b, k, n]), axis=k),
                   name="C")
    op = te.generate(C)
    rng = np.random.default_rng(7)
    a = rng.standard_normal((3, 70, 40)).astype(np.float16)
    b = rng.standard_normal((40, 50) if shared_b else (3, 40, 50)).astype(np.float16)
    ref = np.einsum("bmk,kn->bmn" if shared_b else "bmk,bkn->bmn", a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_allclose(op.reference(a, b), ref, atol=1e-9)
    half_ulp = 0.5 * np.spacing(np.abs(ref).astype(np.float16)).astype(np.float64)
    for cfg in (MATMUL_CONFIGS[0], MATMUL_CONFIGS[5]):
        y = op(a, b, config=cfg)
        assert y.shape == (3, 70, 50) and (np.abs(y.astype(np.float64) - ref) <= half_ulp + 1e-3).all()
        cfg = dict(cfg, num_warps=4, num_stages=3)
        _check(op.launch_profile(dict(Bt=3, M=70, N=50, K=40), cfg), trace(op, a, b, config=cfg))
    assert "over a batch of 64" in str(Task(op, Bt=64, M=512, N=512, K=4096).sketches)


def _softmax(extra=None):
    X = te.placeholder((M, N), "float32", name="X")
    r, r2 = te.reduce_axis(N, "r"), te.reduce_axis(N, "r2")
    mx = te.compute((M,), lambda m: te.max(X[m, r], axis=r), name="mx")
    e = te.compute((M, N), lambda m, n: te.exp(X[m, n] - mx[m]), name="e")
    s = te.compute((M,), lambda m: te.sum(e[m, r2], axis=r2), name="s")
    if extra == "scaled":   # arithmetic on the per-row values alone
        s = te.compute((M,), lambda m: te.sum(e[m, r2], axis=r2) * 2.0 + mx[m] * 0.0, name="s2")
    return te.generate(te.compute((M, N), lambda m, n: e[m, n] / s[m], name="Y"))


@pytest.mark.parametrize("extra", [None, "scaled"])
def test_two_stage_softmax_is_one_row_wise_kernel(extra):
    from kernels import rowsoftmax
    op = _softmax(extra)
    x = np.random.default_rng(8).standard_normal((13, 100)).astype(np.float32)
    ref = op.reference(x)
    want = rowsoftmax.reference(x) / (2.0 if extra else 1.0)
    np.testing.assert_allclose(ref, want, rtol=1e-12)
    assert op.source.count("tl.exp(") == 1                       # exp(x - max) computed once, read twice
    for cfg in (dict(ROWS=1, num_warps=4, num_stages=2), dict(ROWS=4, num_warps=2, num_stages=1)):
        np.testing.assert_allclose(op(x, config=cfg), ref, rtol=1e-5, atol=1e-7)
        _check(op.launch_profile(dict(M=13, N=100), cfg), trace(op, x, config=cfg))
    assert [s.name for s in Task(op, M=4096, N=1024).sketches] == ["row-wise, fused stages"]


def test_profiles_of_random_configs_match_the_traced_ones():
    """Every kind of generated operator, at configs drawn at random from its space."""
    rng = np.random.default_rng(9)
    gemm = _matmul(False, True, epilogue=_row_scale_relu)
    conv = _conv(2, 1)
    X = te.placeholder((M, N), "float16", name="X")
    r = te.reduce_axis(N, "r")
    row_sum = te.generate(te.compute((M,), lambda m: te.sum(X[m, r], axis=r), name="R", dtype="float32"))
    cases = [(gemm, (np.zeros((70, 40), np.float16), np.zeros((50, 40), np.float16), np.zeros(70, np.float16)),
              dict(M=70, N=50, K=40)),
             (conv, (np.zeros((2, 9, 7, 8), np.float16), np.zeros((3, 3, 8, 16), np.float16), np.zeros(16, np.float16)),
              dict(Nb=2, H=9, W=7, C=8, F=16)),
             (row_sum, (np.zeros((5, 3000), np.float16),), dict(M=5, N=3000)),
             (_softmax(), (np.zeros((9, 70), np.float32),), dict(M=9, N=70))]
    for op, arrays, shape in cases:
        for cfg in op.space.sample(rng, 3):
            cfg = cfg.all_kwargs()
            _check(op.launch_profile(shape, cfg), trace(op, *arrays, config=cfg))


def test_rows_centred_by_their_mean_and_element_wise_alone_refused():
    X = te.placeholder((M, N), "float32", name="X")
    r = te.reduce_axis(N, "r")
    mean = te.compute((M,), lambda m: te.sum(X[m, r], axis=r) / 1024.0, name="mean")
    op = te.generate(te.compute((M, N), lambda m, n: X[m, n] - mean[m], name="Y"))
    x = np.random.default_rng(10).standard_normal((5, 1024)).astype(np.float32)
    np.testing.assert_allclose(op(x), x - x.mean(1, keepdims=True), atol=1e-6)
    with pytest.raises(Unsupported, match=r"gelu\(X\[m, n\]\)"):
        te.generate(te.compute((M, N), lambda m, n: te.gelu(X[m, n]), name="G"))
