"""The block language: Triton's semantics on small kernels, errors, and the two execution paths."""
import numpy as np
import pytest
import ml_dtypes

import minitriton as mt
import minitriton.language as tl
import minitriton.language.core as core


@mt.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def test_vector_add_with_tuple_and_callable_grid():
    n = 1000
    rng = np.random.default_rng(0)
    x, y = rng.random(n, np.float32), rng.random(n, np.float32)
    out = np.zeros_like(x)
    add_kernel[(mt.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    np.testing.assert_array_equal(out, x + y)
    out2 = np.zeros_like(x)
    add_kernel[lambda meta: (mt.cdiv(n, meta["BLOCK"]),)](x, y, out2, n, BLOCK=128, num_warps=2, num_stages=1)
    np.testing.assert_array_equal(out2, x + y)
    assert add_kernel.last_launch["num_warps"] == 2


def test_cdiv_and_next_power_of_2():
    assert mt.cdiv(10, 4) == 3 and mt.cdiv(8, 4) == 2
    assert [mt.next_power_of_2(v) for v in (0, 1, 3, 4, 1000)] == [1, 1, 4, 4, 1024]


@mt.jit
def ops_kernel(x_ptr, y_ptr, out_ptr, idx_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    x = tl.load(x_ptr + r[:, None] * N + r[None, :])
    y = tl.load(y_ptr + r)
    z = tl.where(x > 0, tl.exp(x) * 2 - tl.sigmoid(y)[None, :], tl.maximum(x, -0.5) + tl.sqrt(tl.abs(x)))
    z = z + tl.log(tl.abs(y) + 1)[:, None] - tl.minimum(x, y[None, :])
    tl.store(out_ptr + r, tl.sum(z, axis=1) + tl.max(z, axis=1) - tl.min(z, axis=1))
    tl.store(idx_ptr + r, tl.argmax(z, axis=0))
    t = tl.trans(z)
    tl.store(out_ptr + N + tl.arange(0, N * N), tl.reshape(t, (N * N,)))


def test_elementwise_reductions_and_shapes_match_numpy():
    N = 16
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((N, N)).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    out, idx = np.zeros(N + N * N, np.float32), np.zeros(N, np.int32)
    ops_kernel[(1,)](x, y, out, idx, N=N)
    sig = 1 / (1 + np.exp(-y))
    z = np.where(x > 0, np.exp(x) * 2 - sig[None, :], np.maximum(x, -0.5) + np.sqrt(np.abs(x)))
    z = z + np.log(np.abs(y) + 1)[:, None] - np.minimum(x, y[None, :])
    np.testing.assert_allclose(out[:N], z.sum(1) + z.max(1) - z.min(1), rtol=1e-5)
    np.testing.assert_array_equal(idx, z.argmax(0))
    np.testing.assert_allclose(out[N:], z.T.reshape(-1), rtol=1e-6)


@mt.jit
def int_kernel(a_ptr, out_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    a = tl.load(a_ptr + r)
    tl.store(out_ptr + r, (a // 3) + (a % 3) * 100 + ((a & 6) | 1) * 1000 + (a << 2) * 10000)
    tl.store(out_ptr + N + r, (a.to(tl.float32) / 2).to(tl.int32))


def test_integer_ops_follow_c_semantics():
    a = np.array([-7, -3, -1, 0, 1, 2, 5, 7], np.int32)
    out = np.zeros(16, np.int32)
    int_kernel[(1,)](a, out, N=8)
    q = np.trunc(a / 3).astype(np.int32)            # Triton's // and % truncate toward zero like C
    np.testing.assert_array_equal(out[:8], q + np.fmod(a, 3) * 100 + ((a & 6) | 1) * 1000 + (a << 2) * 10000)
    np.testing.assert_array_equal(out[8:], np.trunc(a / 2).astype(np.int32))


@mt.jit
def narrowing_casts(out_ptr, N: tl.constexpr):
    pid = tl.program_id(0)
    lanes = pid * N + tl.arange(0, N)
    tl.store(out_ptr + pid * 8 + 0, (pid - 3).to(tl.uint32).to(tl.int64))        # index scalars...
    tl.store(out_ptr + pid * 8 + 1, (pid - 3).to(tl.uint8).to(tl.int64))
    tl.store(out_ptr + pid * 8 + 2, (pid + 200).to(tl.int8).to(tl.int64))
    tl.store(out_ptr + pid * 8 + 3, (pid * 40000).to(tl.int16).to(tl.int64))
    tl.store(out_ptr + pid * 8 + 4 + tl.arange(0, 4), (lanes * 100 + 120).to(tl.int8).to(tl.int64))  # ...and blocks


@pytest.mark.parametrize("programs", [1, 5])
def test_integer_casts_wrap_index_values_as_twos_complement(programs):
    """An index value (kept affine: `pid - 3`) cast to a narrower or unsigned type wraps as
    Triton's truncation does, and widens from the new type (it once kept -3 for uint32)."""
    out = np.zeros(programs * 8, np.int64)
    narrowing_casts[(programs,)](out, N=4)
    for p in range(programs):
        lanes = p * 4 + np.arange(4)
        want = [(p - 3) % 2 ** 32, (p - 3) % 256, np.int64(p + 200).astype(np.int8), np.int64(p * 40000).astype(np.int16),
                *(lanes * 100 + 120).astype(np.int8)]
        np.testing.assert_array_equal(out[p * 8:(p + 1) * 8], want)


@mt.jit
def half_kernel(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    x = tl.load(x_ptr + r)
    y = tl.load(y_ptr + r)
    tl.store(out_ptr + r, x * y + x)  # fp16 arithmetic: every operation rounds to fp16


def test_fp16_and_bf16_arithmetic_round_like_native_types():
    rng = np.random.default_rng(2)
    for dt in (np.float16, ml_dtypes.bfloat16):
        x, y = rng.standard_normal(64).astype(dt), rng.standard_normal(64).astype(dt)
        out = np.zeros(64, dt)
        half_kernel[(1,)](x, y, out, N=64)
        want = ((x.astype(np.float32) * y.astype(np.float32)).astype(dt).astype(np.float32) + x.astype(np.float32)).astype(dt)
        np.testing.assert_array_equal(out.view(np.uint16), want.view(np.uint16))


@mt.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, PREC: tl.constexpr):
    a = tl.load(a_ptr + tl.arange(0, M)[:, None] * K + tl.arange(0, K)[None, :])
    b = tl.load(b_ptr + tl.arange(0, K)[:, None] * N + tl.arange(0, N)[None, :])
    acc = tl.full((M, N), 1.0, tl.float32)
    c = tl.dot(a, b, acc, input_precision=PREC)
    tl.store(c_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], c)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32])
def test_dot_accumulates_in_fp32(dtype):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((32, 16)).astype(dtype), rng.standard_normal((16, 64)).astype(dtype)
    c = np.zeros((32, 64), np.float32)
    dot_kernel[(1,)](a, b, c, M=32, N=64, K=16, PREC="ieee")
    exact = a.astype(np.float64) @ b.astype(np.float64) + 1
    assert np.abs(c - exact).max() < 16 * 2.0 ** -24 * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)) + 1).max()


def test_dot_tf32_rounds_fp32_inputs():
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((16, 16)).astype(np.float32), rng.standard_normal((16, 16)).astype(np.float32)
    c_ieee, c_tf32 = np.zeros((16, 16), np.float32), np.zeros((16, 16), np.float32)
    dot_kernel[(1,)](a, b, c_ieee, M=16, N=16, K=16, PREC="ieee")
    dot_kernel[(1,)](a, b, c_tf32, M=16, N=16, K=16, PREC="tf32")
    err_ieee = np.abs(c_ieee - (a.astype(np.float64) @ b + 1)).max()
    err_tf32 = np.abs(c_tf32 - (a.astype(np.float64) @ b + 1)).max()
    assert err_ieee < 1e-5 < err_tf32 < 1e-2


def test_dot_bf16_splits_sit_between_tf32_and_ieee():
    """Triton's newer input precisions: fp32 products from 3 or 6 bf16 products.  bf16x3 keeps
    about 16 bits of each operand, bf16x6 about 24 (fp32's)."""
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((32, 64)).astype(np.float32), rng.standard_normal((64, 32)).astype(np.float32)
    exact = a.astype(np.float64) @ b.astype(np.float64) + 1
    err = {}
    for prec in ("ieee", "tf32", "bf16x3", "bf16x6"):
        c = np.zeros((32, 32), np.float32)
        dot_kernel[(1,)](a, b, c, M=32, N=32, K=64, PREC=prec)
        err[prec] = np.abs(c - exact).max()
    assert err["ieee"] < 1e-4 and err["bf16x6"] < 1e-4
    assert 1e-4 < err["bf16x3"] < err["tf32"] / 4


@pytest.mark.parametrize("prec", ["bf16x3", "bf16x6"])
def test_dot_bf16_splits_exact_on_bf16_values_and_keep_infinities(prec):
    rng = np.random.default_rng(6)
    a = rng.standard_normal((16, 16)).astype(ml_dtypes.bfloat16).astype(np.float32)
    b = rng.standard_normal((16, 16)).astype(ml_dtypes.bfloat16).astype(np.float32)
    c, want = np.zeros((16, 16), np.float32), np.zeros((16, 16), np.float32)
    dot_kernel[(1,)](a, b, c, M=16, N=16, K=16, PREC=prec)     # the low parts are all zero
    dot_kernel[(1,)](a, b, want, M=16, N=16, K=16, PREC="ieee")
    np.testing.assert_array_equal(c, want)
    # 1.0 times infinity: the small parts' products are 0 * inf = NaN, dropped before the leading one
    ones, inf = np.ones((16, 16), np.float32), np.zeros((16, 16), np.float32)
    inf[0, 0] = np.inf
    dot_kernel[(1,)](ones, inf, c, M=16, N=16, K=16, PREC=prec)
    assert c[0, 0] == np.inf and np.isfinite(c[:, 1:]).all() and (c[:, 1:] == 1).all()


def test_dot_refuses_an_unknown_precision():
    a = np.zeros((16, 16), np.float32)
    with pytest.raises(Exception, match="input_precision must be one of .*'bf16x6', got 'bf16x9'"):
        dot_kernel[(1,)](a, a, a.copy(), M=16, N=16, K=16, PREC="bf16x9")


@mt.jit
def dot_transposed_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                          TA: tl.constexpr, TB: tl.constexpr):
    """Triton 2.0's spelling: operands stored transposed (a as K x M, b as N x K), taken by flags."""
    m, n, k = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + k[:, None] * M + m[None, :]) if TA else tl.load(a_ptr + m[:, None] * K + k[None, :])
    b = tl.load(b_ptr + n[:, None] * K + k[None, :]) if TB else tl.load(b_ptr + k[:, None] * N + n[None, :])
    tl.store(c_ptr + m[:, None] * N + n[None, :], tl.dot(a, b, trans_a=TA, trans_b=TB))


@pytest.mark.parametrize("ta, tb", [(False, True), (True, False), (True, True)])
def test_dot_takes_triton_2_0_transpose_flags(ta, tb):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((16, 32)).astype(np.float16), rng.standard_normal((32, 8)).astype(np.float16)
    c = np.zeros((16, 8), np.float32)
    dot_transposed_kernel[(1,)](np.ascontiguousarray(a.T) if ta else a, np.ascontiguousarray(b.T) if tb else b, c,
                                M=16, N=8, K=32, TA=ta, TB=tb)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-5, atol=1e-5)


@mt.jit
def atomic_kernel(x_ptr, hist_ptr, mx_ptr, old_ptr, N: tl.constexpr, BINS: tl.constexpr):
    offs = tl.program_id(0) * N + tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    old = tl.atomic_add(hist_ptr + (x % BINS), 1)
    tl.store(old_ptr + offs, old)
    tl.atomic_max(mx_ptr + tl.program_id(0) % 2, tl.max(x, axis=0))


def test_atomics_are_applied_in_order_and_return_old_values():
    x = np.random.default_rng(5).integers(0, 1000, 8 * 32).astype(np.int32)
    hist, mx, old = np.zeros(7, np.int32), np.zeros(2, np.int32), np.zeros(256, np.int32)
    atomic_kernel[(8,)](x, hist, mx, old, N=32, BINS=7)
    np.testing.assert_array_equal(hist, np.bincount(x % 7, minlength=7))
    assert mx[0] == x.reshape(8, 32)[0::2].max() and mx[1] == x.reshape(8, 32)[1::2].max()
    for b in range(7):  # each lane saw the count of earlier lanes with its bin
        np.testing.assert_array_equal(np.sort(old[x % 7 == b]), np.arange(hist[b]))


@mt.jit
def branchy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    if pid % 2 == 0:                       # control flow that depends on the program id
        x = x * 2
    for i in range(pid):                   # a loop bound that differs between programs
        x = x + 1
    tl.store(out_ptr + offs, x, mask=offs < n)


def test_program_dependent_control_flow_falls_back_correctly():
    n = 300
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    branchy_kernel[(mt.cdiv(n, 64),)](x, out, n, BLOCK=64)
    pid = np.arange(n) // 64
    np.testing.assert_array_equal(out, np.where(pid % 2 == 0, x * 2, x) + pid)


@mt.jit
def oob_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + 1)          # unmasked: the last program overruns


def test_out_of_bounds_names_kernel_program_and_argument_and_writes_nothing():
    x = np.ones(100, np.float32)
    out = np.full(100, 7.0, np.float32)
    with pytest.raises(mt.OutOfBoundsError) as e:
        oob_kernel[(4,)](x, out, 100, BLOCK=32)
    msg = str(e.value)
    assert "oob_kernel" in msg and "(3, 0, 0)" in msg and "'x_ptr'" in msg and "load" in msg
    assert (out == 7.0).all()  # the launch wrote nothing, not even the programs that succeeded


@mt.jit
def oob_store_kernel(out_ptr, BLOCK: tl.constexpr):
    tl.store(out_ptr + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK) * 2, 1.0)


def test_out_of_bounds_store_is_reported():
    out = np.zeros(64, np.float32)
    with pytest.raises(mt.OutOfBoundsError, match=r"program \(1, 0, 0\).*store.*'out_ptr'"):
        oob_store_kernel[(2,)](out, BLOCK=32)
    assert (out == 0).all()


def test_bad_launches_raise_clear_errors():
    x = np.zeros(8, np.float32)
    with pytest.raises(TypeError, match="missing.*constexpr BLOCK"):
        add_kernel[(1,)](x, x, x, 8)
    with pytest.raises(TypeError, match="takes 5 arguments"):
        add_kernel[(1,)](x, x, x, 8, 8, 8)
    with pytest.raises(TypeError, match="unexpected keyword"):
        add_kernel[(1,)](x, x, x, 8, BLOCK=8, BLOK=3)
    with pytest.raises(TypeError, match=r"unexpected keyword argument\(s\) \['waves_per_eux'\]"):
        add_kernel[(1,)](x, x, x, 8, BLOCK=8, waves_per_eux=2)      # a misspelt backend option is refused


def test_backend_compile_options_are_taken_and_change_nothing():
    """Triton's AMD and NVIDIA backends take their own compile options at launch (tutorial 10's
    CDNA4 kernel passes matrix_instr_nonkdim): a kernel written for either runs here unchanged."""
    x, y = np.arange(64, dtype=np.float32), np.ones(64, np.float32)
    want = x + y
    for hint in ({"waves_per_eu": 2, "matrix_instr_nonkdim": 16, "kpack": 2}, {"cluster_dims": (2, 1, 1)},
                 {"schedule_hint": "none", "allow_flush_denorm": True}, {"extern_libs": {}},
                 {"stream": None, "device": 0, "device_type": "cuda"}):     # Triton 2.x's launch arguments
        out = np.zeros(64, np.float32)
        add_kernel[(2,)](x, y, out, 64, BLOCK=32, **hint)
        assert np.array_equal(out, want), hint
    with pytest.raises(ValueError, match="power of 2"):
        add_kernel[(1,)](x, x, x, 8, BLOCK=6)
    with pytest.raises(ValueError, match="grid"):
        add_kernel[(1, 2, 3, 4)](x, x, x, 8, BLOCK=8)
    with pytest.raises(TypeError, match="unsupported type"):
        add_kernel[(1,)](x, [1, 2], x, 8, BLOCK=8)
    with pytest.raises(RuntimeError, match="grid"):
        add_kernel(x, x, x, 8, BLOCK=8)


def test_dot_rejects_mismatched_shapes_and_dtypes():
    a16, b32 = np.zeros((16, 16), np.float16), np.zeros((16, 16), np.float32)
    c = np.zeros((16, 16), np.float32)
    with pytest.raises(TypeError, match="same dtype"):
        dot_kernel[(1,)](a16, b32, c, M=16, N=16, K=16, PREC="ieee")

    @mt.jit
    def bad_shape(a_ptr, c_ptr):
        a = tl.load(a_ptr + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :])
        b = tl.load(a_ptr + tl.arange(0, 32)[:, None] * 16 + tl.arange(0, 16)[None, :])
        tl.store(c_ptr + tl.arange(0, 16), tl.sum(tl.dot(a, b), axis=1))

    with pytest.raises(ValueError, match="shape mismatch"):
        bad_shape[(1,)](np.zeros(512, np.float16), c)


def test_read_only_argument_cannot_be_stored_to():
    x = np.zeros(8, np.float32)
    ro = np.zeros(8, np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="'out_ptr' is read-only"):
        add_kernel[(1,)](x, x, ro, 8, BLOCK=8)


@mt.jit
def copy2d_kernel(x_ptr, y_ptr, M, N, sxm, sxn, sym, syn, BM: tl.constexpr, BN: tl.constexpr):
    m = tl.program_id(0) * BM + tl.arange(0, BM)
    n = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (m[:, None] < M) & (n[None, :] < N)
    v = tl.load(x_ptr + m[:, None] * sxm + n[None, :] * sxn, mask=mask)
    tl.store(y_ptr + m[:, None] * sym + n[None, :] * syn, v, mask=mask)


def test_strided_views_including_negative_strides():
    base = np.arange(30 * 40, dtype=np.float32).reshape(30, 40)
    for x in (base.T, base[::-1, ::2], base[3:20:3, ::-1]):
        y = np.zeros(x.shape, np.float32)
        s = [st // 4 for st in x.strides] + [st // 4 for st in y.strides]
        copy2d_kernel[(mt.cdiv(x.shape[0], 16), mt.cdiv(x.shape[1], 16))](x, y, *x.shape, *s, BM=16, BN=16)
        np.testing.assert_array_equal(y, x)


def test_in_place_update_through_aliased_arguments():
    x = np.arange(100, dtype=np.float32)
    add_kernel[(4,)](x, x, x, 100, BLOCK=32)
    np.testing.assert_array_equal(x, 2 * np.arange(100, dtype=np.float32))


@mt.jit
def batched_dot_kernel(a_ptr, b_ptr, c_ptr, B: tl.constexpr, M: tl.constexpr, K: tl.constexpr, N: tl.constexpr):
    i = tl.arange(0, B)[:, None, None]
    a = tl.load(a_ptr + i * M * K + tl.arange(0, M)[None, :, None] * K + tl.arange(0, K)[None, None, :])
    b = tl.load(b_ptr + i * K * N + tl.arange(0, K)[None, :, None] * N + tl.arange(0, N)[None, None, :])
    c = tl.dot(a, b, tl.zeros((B, M, N), tl.float32))
    tl.store(c_ptr + i * M * N + tl.arange(0, M)[None, :, None] * N + tl.arange(0, N)[None, None, :], c)


def test_three_dimensional_dot():
    rng = np.random.default_rng(9)
    a, b = rng.standard_normal((2, 16, 32)).astype(np.float16), rng.standard_normal((2, 32, 16)).astype(np.float16)
    c = np.zeros((2, 16, 16), np.float32)
    batched_dot_kernel[(1,)](a, b, c, B=2, M=16, K=32, N=16)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-5, atol=1e-5)


@mt.jit
def store_then_load_kernel(x_ptr, out_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    tl.store(out_ptr + r, tl.load(x_ptr + r) * 3.0)        # fp32 values into an fp16 argument
    tl.store(out_ptr + N + r, tl.load(out_ptr + r) + 0)     # read back: must see fp16-rounded values


def test_values_stored_to_half_are_rounded_even_when_read_back_in_the_launch():
    x = np.random.default_rng(10).standard_normal(16).astype(np.float32)
    out = np.zeros(32, np.float16)
    store_then_load_kernel[(1,)](x, out, N=16)
    want = (x * 3).astype(np.float16)
    np.testing.assert_array_equal(out[:16], want)
    np.testing.assert_array_equal(out[16:], want)


@mt.jit
def numpy_scalars_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    i = offs.to(tl.int32)
    y = np.float32(2) * x - np.float32(1) + (np.int32(7) - i) * (np.float32(0.5) < x)
    y += ((np.int32(1) << (i & 3)) | np.int32(8)) % np.int32(5) + (np.int32(20) // (i + 1))
    tl.store(y_ptr + offs, y)


@mt.jit
def numpy_function_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, np.sin(tl.load(x_ptr + offs)))


def test_numpy_scalars_are_operators_and_numpy_functions_are_refused():
    """`np.float32(2) * x` is the operator on the block (numpy defers to it); `np.sin(x)` is not a
    Triton operation and is refused, as Triton's compiler refuses it, instead of running."""
    x = np.linspace(0, 1, 16, dtype=np.float32)
    y = np.zeros_like(x)
    numpy_scalars_kernel[(1,)](x, y, BLOCK=16)
    i = np.arange(16, dtype=np.int32)
    want = 2 * x - 1 + (7 - i) * (0.5 < x) + ((1 << (i & 3)) | 8) % 5 + 20 // (i + 1)
    np.testing.assert_allclose(y, want.astype(np.float32), rtol=1e-6)
    with pytest.raises(TypeError, match="numpy's sin cannot run on a block inside a minitriton kernel.*tl.sin"):
        numpy_function_kernel[(1,)](x, y, BLOCK=16)


@mt.jit
def softmax_forms_kernel(x_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr, FORM: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + offs)
    if FORM == 0:
        y = tl.softmax(x)
    elif FORM == 1:
        y = tl.softmax(x, dim=1, keep_dims=True)
    elif FORM == 2:
        y = x.softmax(0, True, ieee_rounding=True)
    else:
        y = tl.softmax(x, 1)
    tl.store(y_ptr + offs, y)


@pytest.mark.parametrize("form, axis", [(0, 0), (1, 1), (2, 0)])
def test_softmax_takes_dim_and_keep_dims(form, axis):
    """Triton's softmax(x, dim=None, keep_dims=False, ieee_rounding=False), as triton_kernels'
    top-k calls it along its rows (it took only ieee_rounding before, over axis 0)."""
    x = np.random.default_rng(form).standard_normal((4, 8)).astype(np.float32)
    y = np.zeros_like(x)
    softmax_forms_kernel[(1,)](x, y, 4, 8, form)
    e = np.exp(x - x.max(axis, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis, keepdims=True), rtol=1e-6)


@pytest.mark.parametrize("m, n", [(4, 8), (4, 4)])
def test_softmax_along_rows_without_keep_dims_is_along_rows_as_triton_3_9_fixed_it(m, n):
    """Before 3.9 the row of maxima met the block from the right: a shape error on (4, 8), and on
    a square block a softmax down the columns; 3.9 lists that as a wrong result fixed."""
    x = np.random.default_rng(m * n).standard_normal((m, n)).astype(np.float32)
    y = np.zeros_like(x)
    softmax_forms_kernel[(1,)](x, y, m, n, 3)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(1, keepdims=True), rtol=1e-6)


@mt.jit
def shape_arithmetic_kernel(x_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    tl.static_assert(x.shape[:-1] + [N] == [M, N])
    tl.static_assert([1] + x.shape == (1, M, N))
    y = tl.reshape(x, x.shape[:-1] + [N // 2, 2])
    lo, hi = tl.split(y)
    tl.store(y_ptr + tl.arange(0, M)[:, None] * (N // 2) + tl.arange(0, N // 2)[None, :], lo + hi)


def test_a_block_shape_slices_and_joins_lists_as_triton_shapes_do():
    """`x.shape[:-1] + [32]` builds a shape in triton_kernels' vpopc: Triton's shape is a list
    (a tl.tuple in newer Triton), which joins a list on either side."""
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    y = np.zeros((4, 4), np.float32)
    shape_arithmetic_kernel[(1,)](x, y, 4, 8)
    np.testing.assert_array_equal(y, x[:, 0::2] + x[:, 1::2])


@mt.jit
def _min_by_branch(a, b):
    if a <= b:
        return a
    else:
        return b


@mt.jit
def _argmin_by_branch(v1, i1, v2, i2):
    if v2 < v1:
        return v2, i2
    return v1, i1


@mt.jit
def branching_combine_kernel(x_ptr, scan_ptr, min_ptr, arg_ptr, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + offs)
    tl.store(scan_ptr + offs, tl.associative_scan(x, 1, _min_by_branch))
    idx = tl.broadcast_to(tl.arange(0, N)[None, :], (M, N))
    low, where = tl.reduce((x, idx), 1, _argmin_by_branch)
    tl.store(min_ptr + tl.arange(0, M), low)
    tl.store(arg_ptr + tl.arange(0, M), where)


def test_a_combine_function_may_branch_on_its_operands():
    """Triton runs a combine function on scalars, so `if a <= b: return a` in it is control flow
    (FlagGems' cummin): here it runs once per element when it branches on block values."""
    from tests.test_semantics import both
    x = np.random.default_rng(1).integers(-5, 5, (4, 16)).astype(np.float32)   # ties: the first index wins

    def run():
        scan, low, arg = np.zeros_like(x), np.zeros(4, np.float32), np.zeros(4, np.int32)
        branching_combine_kernel[(1,)](x, scan, low, arg, 4, 16)
        return scan, low, arg
    for scan, low, arg in both(run):
        np.testing.assert_array_equal(scan, np.minimum.accumulate(x, axis=1))
        np.testing.assert_array_equal(low, x.min(1))
        np.testing.assert_array_equal(arg, x.argmin(1))


@mt.jit
def member_fn_kernel(x_ptr, y_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.static_assert(x.twice().dtype == tl.float32)
    tl.store(y_ptr + tl.arange(0, N), x.twice())


def test_library_helpers_of_triton_language_core():
    """What libraries copy from triton.language.core with its standard library: a @jit function
    made a tensor method, the docstring decorators, and bfloat16 promoted to float32 before a
    reduction's combine function."""
    @core._tensor_member_fn
    @mt.jit
    @core._add_reduction_docstr("twice")
    def twice(x):
        return core._promote_reduction_input(x) * 2

    x = np.arange(8, dtype=np.float32).astype(ml_dtypes.bfloat16)
    y = np.zeros(8, np.float32)
    member_fn_kernel[(1,)](x, y, 8)
    np.testing.assert_array_equal(y, np.arange(8, dtype=np.float32) * 2)
    assert tl.math._add_math_1arg_docstr("exp")(np.exp) is np.exp and core._add_scan_docstr("cummax")(len) is len


@mt.jit
def discarded_advance_kernel(x_ptr, y_ptr, K, FORM: tl.constexpr):
    p = tl.make_block_ptr(x_ptr, (4, K), (K, 1), (0, 0), (4, 8), (1, 0))
    acc = tl.zeros((4, 8), tl.float32)
    for _ in range(0, K, 8):
        acc += tl.load(p)
        if FORM == 0:
            tl.advance(p, (0, 8))
        elif FORM == 1:
            p.advance((0, 8))
        else:
            p = tl.advance(p, (0, 8))
    tl.store(y_ptr + tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :], acc)


@pytest.mark.parametrize("form, call", [(0, "tl.advance"), (1, "p.advance")])
def test_an_advance_whose_result_is_thrown_away_is_refused(form, call):
    """tl.advance moves nothing in place: as a statement of its own the loop would load one block
    every time.  Triton's front end refuses it (must_use_result); so does minitriton."""
    x = np.arange(128, dtype=np.float32).reshape(4, 32)
    y = np.zeros((4, 8), np.float32)
    with pytest.raises(mt.CompilationError, match=f"The result of {call} is not being used"):
        discarded_advance_kernel[(1,)](x, y, 32, form)
    discarded_advance_kernel[(1,)](x, y, 32, 2)
    np.testing.assert_array_equal(y, x.reshape(4, 4, 8).sum(1))



@mt.jit
def _squeezed(x_ptr, o_ptr):
    x = tl.load(x_ptr + tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :])
    y = tl.unsqueeze(x, 1)
    tl.static_assert(y.shape == [4, 1, 8])
    row_total = tl.sum(tl.squeeze(tl.unsqueeze(tl.arange(0, 8), 0), 0))
    tl.store(o_ptr + tl.arange(0, 4)[:, None] * 8 + tl.arange(0, 8)[None, :], y.squeeze(-2) + row_total)


@mt.jit
def _squeeze_long(o_ptr):
    tl.store(o_ptr + tl.arange(0, 4), tl.squeeze(tl.arange(0, 4), 0))


def test_squeeze_and_unsqueeze_as_triton_s_main_documents_them():
    x = np.arange(32, dtype=np.int32)
    out = np.zeros(32, np.int32)
    _squeezed[(1,)](x, out)
    np.testing.assert_array_equal(out, x + 28)
    with pytest.raises(mt.CompilationError, match="dimension 0 of a block of shape \\[4\\] has length 4, not 1"):
        _squeeze_long[(1,)](out)


@mt.jit
def _methods_of_pointers(x_ptr, o_ptr, c_ptr):
    x = tl.load(x_ptr + tl.arange(0, 8))
    (o_ptr + tl.arange(0, 8)).store(x.cdiv(3))
    c_ptr.atomic_add(2)
    c_ptr.atomic_max(5)
    (c_ptr + 1).atomic_cas(0, 7)


def test_store_cdiv_and_atomics_are_tensor_methods_as_in_triton():
    x = np.arange(8, dtype=np.int32)
    out = np.zeros(8, np.int32)
    counters = np.zeros(2, np.int32)
    _methods_of_pointers[(2,)](x, out, counters)
    np.testing.assert_array_equal(out, (x + 2) // 3)
    np.testing.assert_array_equal(counters, [5, 7])     # 2 + 2, then max with 5; the cas swaps once
