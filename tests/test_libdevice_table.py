"""The rest of CUDA libdevice's table as Triton exposes it: integer intrinsics, arithmetic in each
rounding mode, conversions, bit reinterpretations and the special functions beyond the basics,
each checked against an independent reference (Python's integers, exact fractions, scipy)."""
from fractions import Fraction

import numpy as np
import pytest
from scipy import special

import minitriton as mt
import minitriton.language as tl
from minitriton.language.extra import libdevice
from minitriton.language.extra.cuda import libdevice as cuda_libdevice


@mt.jit
def apply1(x_ptr, out_ptr, n, N: tl.constexpr, FN: tl.constexpr):
    o = tl.arange(0, N)
    m = o < n
    tl.store(out_ptr + o, FN(tl.load(x_ptr + o, mask=m)), mask=m)


@mt.jit
def apply2(x_ptr, y_ptr, out_ptr, n, N: tl.constexpr, FN: tl.constexpr):
    o = tl.arange(0, N)
    m = o < n
    tl.store(out_ptr + o, FN(tl.load(x_ptr + o, mask=m), tl.load(y_ptr + o, mask=m)), mask=m)


@mt.jit
def apply3(x_ptr, y_ptr, z_ptr, out_ptr, n, N: tl.constexpr, FN: tl.constexpr):
    o = tl.arange(0, N)
    m = o < n
    tl.store(out_ptr + o, FN(tl.load(x_ptr + o, mask=m), tl.load(y_ptr + o, mask=m), tl.load(z_ptr + o, mask=m)),
             mask=m)


def run(fn, out_dtype, *args):
    """fn applied in a kernel to the arrays, lane by lane (the block padded to a power of two)."""
    n = args[0].shape[0]
    out = np.zeros(n, out_dtype)
    kernel = (apply1, apply2, apply3)[len(args) - 1]
    kernel[(1,)](*args, out, n, N=1 << max(n - 1, 0).bit_length(), FN=fn)
    return out


INT32_EDGES = np.array([0, 1, -1, 2, 3, 255, 256, -2 ** 31, 2 ** 31 - 1, 0x12345678, -0x12345678, 7, 8, 9, 1 << 20,
                        -(1 << 20)], np.int32)


def test_bit_counts_and_reversals_match_python_integers():
    rng = np.random.default_rng(0)
    for dt, bits in ((np.int32, 32), (np.int64, 64)):
        x = np.concatenate([INT32_EDGES.astype(dt), rng.integers(np.iinfo(dt).min, np.iinfo(dt).max, 16, dt)])
        u = [int(v) & ((1 << bits) - 1) for v in x]
        assert run(libdevice.clz, np.int32, x).tolist() == [bits - v.bit_length() for v in u]
        assert run(libdevice.popc, np.int32, x).tolist() == [bin(v).count("1") for v in u]
        assert run(libdevice.ffs, np.int32, x).tolist() == [(v & -v).bit_length() for v in u]
        rev = [int(f"{v:0{bits}b}"[::-1], 2) for v in u]
        assert [int(v) & ((1 << bits) - 1) for v in run(libdevice.brev, dt, x)] == rev


@pytest.mark.parametrize("dt", [np.int32, np.uint32, np.int64, np.uint64])
def test_mulhi_is_the_high_half_of_the_full_product(dt):
    rng = np.random.default_rng(1)
    info = np.iinfo(dt)
    x = np.concatenate([np.array([info.min, info.max, 0, 1], dt), rng.integers(info.min, info.max, 28, dt,
                                                                              endpoint=True)])
    y = np.concatenate([np.array([info.max, info.min, 5, info.max], dt), rng.integers(info.min, info.max, 28, dt,
                                                                                      endpoint=True)])
    bits = np.dtype(dt).itemsize * 8
    got = run(libdevice.mulhi, dt, x, y)
    want = [(int(a) * int(b)) >> bits for a, b in zip(x, y)]
    assert [int(g) for g in got] == [w if np.issubdtype(dt, np.signedinteger) else w & ((1 << bits) - 1)
                                     for w in want]


def test_small_integer_intrinsics():
    a = np.array([5, -7, 2 ** 24 + 3, -2 ** 23, 100, 0, 2 ** 31 - 1, -2 ** 31], np.int32)
    b = np.array([3, 9, 2, 3, -100, 0, 2 ** 31 - 1, -2 ** 31], np.int32)

    def s24(v):
        v &= 0xFFFFFF
        return v - (1 << 24) if v & 0x800000 else v
    mul24 = [((s24(int(p)) * s24(int(q))) + 2 ** 31) % 2 ** 32 - 2 ** 31 for p, q in zip(a, b)]
    assert run(libdevice.mul24, np.int32, a, b).tolist() == mul24
    assert run(libdevice.hadd, np.int32, a, b).tolist() == [(int(p) + int(q)) >> 1 for p, q in zip(a, b)]
    assert run(libdevice.rhadd, np.int32, a, b).tolist() == [(int(p) + int(q) + 1) >> 1 for p, q in zip(a, b)]
    z = np.arange(8, dtype=np.uint32)
    sad = run(libdevice.sad, np.int32, a, b, z)
    assert sad.tolist() == [((abs(int(p) - int(q)) + int(r)) % 2 ** 32 + 2 ** 31) % 2 ** 32 - 2 ** 31
                            for p, q, r in zip(a, b, z)]
    x, y = np.full(4, 0x33221100, np.int32), np.full(4, 0x77665544, np.int32)
    sel = np.array([0x3210, 0x7654, 0x0123, 0x5140], np.int32)
    assert [hex(int(v) & 0xFFFFFFFF) for v in run(libdevice.byte_perm, np.int32, x, y, sel)] == \
        ["0x33221100", "0x77665544", "0x112233", "0x55114400"]
    assert run(libdevice.abs, np.int32, np.array([-3, 4, -2 ** 31], np.int32)).tolist() == [3, 4, -2 ** 31]
    assert run(libdevice.abs, np.float32, np.array([-3.5, 0.0, -0.0], np.float32)).tolist() == [3.5, 0.0, 0.0]


def _exact(op, *vals):
    f = [Fraction(float(v)) for v in vals]
    return {"add": lambda: f[0] + f[1], "sub": lambda: f[0] - f[1], "mul": lambda: f[0] * f[1],
            "div": lambda: f[0] / f[1], "rcp": lambda: 1 / f[0], "fma": lambda: f[0] * f[1] + f[2]}[op]()


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("op, nargs", [("add", 2), ("sub", 2), ("mul", 2), ("div", 2), ("rcp", 1), ("fma", 3),
                                       ("sqrt", 1)])
def test_each_rounding_mode_brackets_the_exact_result(dt, op, nargs):
    """rd <= exact <= ru, one ulp apart unless exact is representable (then all four agree); rz is
    the one toward zero; rn the nearer (both when exact is a float: numpy's own result)."""
    rng = np.random.default_rng(2)
    vals = [(rng.standard_normal(32) * 10.0 ** rng.integers(-3, 4, 32)).astype(dt) for _ in range(nargs)]
    if op == "sqrt":
        vals[0] = np.abs(vals[0])
    vals[0][:4] = [1, 2, 3, 0.5]
    if nargs > 1:
        vals[1][:4] = [3, 7, 3, 2]
    got = {m: run(getattr(libdevice, f"{op}_{m}"), dt, *vals) for m in ("rn", "rz", "rd", "ru")}
    for i in range(32):
        lo, hi = got["rd"][i], got["ru"][i]
        if op == "sqrt":
            q = Fraction(float(vals[0][i]))
            exact_lo_ok = Fraction(float(lo)) ** 2 <= q <= Fraction(float(hi)) ** 2
            representable = Fraction(float(lo)) ** 2 == q
            assert exact_lo_ok
        else:
            exact = _exact(op, *(v[i] for v in vals))
            assert Fraction(float(lo)) <= exact <= Fraction(float(hi))
            representable = Fraction(float(lo)) == exact
        assert (lo == hi) == representable
        if not representable:
            assert np.nextafter(lo, dt(np.inf)) == hi
        assert got["rz"][i] == (lo if lo >= 0 else hi)
        assert got["rn"][i] in (lo, hi)


def test_directed_modes_at_their_edges():
    one, tiny = np.array([1.0], np.float32), np.array([1e-30], np.float32)
    assert run(libdevice.add_ru, np.float32, one, tiny)[0] == np.nextafter(np.float32(1), np.float32(2))
    assert run(libdevice.add_rd, np.float32, one, tiny)[0] == 1.0
    zero = run(libdevice.add_rd, np.float32, one, -one)                    # x + -x is -0 rounding down
    assert zero[0] == 0 and np.signbit(zero[0])
    assert not np.signbit(run(libdevice.add_ru, np.float32, one, -one)[0])
    big = np.array([3e38], np.float32)
    assert run(libdevice.mul_rz, np.float32, big, big)[0] == np.finfo(np.float32).max
    assert run(libdevice.mul_ru, np.float32, big, big)[0] == np.inf
    assert run(libdevice.mul_rd, np.float32, -big, big)[0] == -np.inf
    assert np.isnan(run(libdevice.sqrt_rd, np.float32, np.array([-1.0], np.float32))[0])
    assert run(libdevice.div_rz, np.float32, one, np.zeros(1, np.float32))[0] == np.inf
    # fma rounds once: (1 + 2**-12)**2 - 1 is 2**-11 + 2**-24 exactly, where rounding the product
    # first (a tie, to even) would lose the 2**-24
    a, c = np.array([1 + 2.0 ** -12], np.float32), np.array([-1.0], np.float32)
    assert run(libdevice.fma_rn, np.float32, a, a, c)[0] == np.float32(2.0 ** -11 + 2.0 ** -24)
    assert (a * a + c)[0] == np.float32(2.0 ** -11)
    x = np.array([2.0], np.float32)
    assert run(libdevice.rsqrt_rn, np.float32, x)[0] == np.float32(1 / np.sqrt(2.0))


def test_conversions_round_by_mode_and_saturate():
    x = np.array([2.5, 3.5, -2.5, -0.4, 1e10, -1e10, np.nan, 0.99], np.float32)
    assert run(libdevice.float2int_rn, np.int32, x).tolist() == [2, 4, -2, 0, 2 ** 31 - 1, -2 ** 31, 0, 1]
    assert run(libdevice.float2int_rz, np.int32, x).tolist() == [2, 3, -2, 0, 2 ** 31 - 1, -2 ** 31, 0, 0]
    assert run(libdevice.float2int_rd, np.int32, x).tolist() == [2, 3, -3, -1, 2 ** 31 - 1, -2 ** 31, 0, 0]
    assert run(libdevice.float2int_ru, np.int32, x).tolist() == [3, 4, -2, 0, 2 ** 31 - 1, -2 ** 31, 0, 1]
    u = run(libdevice.float2uint_rn, np.int32, x)                   # uint32 bits in an int32, as Triton types it
    assert [v & 0xFFFFFFFF for v in u.tolist()] == [2, 4, 0, 0, 2 ** 32 - 1, 0, 0, 1]
    assert run(libdevice.double2ll_rn, np.int64, np.array([2.0 ** 70, -2.5], np.float64)).tolist() == \
        [2 ** 63 - 1, -2]
    n = np.array([2 ** 24 + 1, -(2 ** 24 + 1), 7], np.int32)
    assert run(libdevice.int2float_rz, np.float32, n).tolist() == [2 ** 24, -(2 ** 24), 7]
    assert run(libdevice.int2float_ru, np.float32, n).tolist() == [2 ** 24 + 2, -(2 ** 24), 7]
    assert run(libdevice.int2float_rd, np.float32, n).tolist() == [2 ** 24, -(2 ** 24 + 2), 7]
    d = np.array([1 + 2.0 ** -30, -(1 + 2.0 ** -30)], np.float64)
    up = np.nextafter(np.float32(1), np.float32(2))
    assert run(libdevice.double2float_ru, np.float32, d).tolist() == [up, -1.0]
    assert run(libdevice.double2float_rd, np.float32, d).tolist() == [1.0, -up]
    assert run(libdevice.double2float_rn, np.float32, d).tolist() == [1.0, -1.0]


def test_reinterpretations_keep_the_bits():
    f = np.array([1.0, -2.5, np.inf, 0.0], np.float32)
    bits = run(libdevice.float_as_int, np.int32, f)
    assert bits.tolist() == f.view(np.int32).tolist()
    np.testing.assert_array_equal(run(libdevice.int_as_float, np.float32, bits), f)
    d = np.array([np.pi, -1e300, 5e-324, 2.0], np.float64)
    hi, lo = run(libdevice.double2hiint, np.int32, d), run(libdevice.double2loint, np.int32, d)
    np.testing.assert_array_equal(run(libdevice.hiloint2double, np.float64, hi, lo), d)
    np.testing.assert_array_equal(run(libdevice.double_as_longlong, np.int64, d), d.view(np.int64))


def test_special_functions_beyond_the_basics():
    x = np.linspace(-0.95, 0.95, 16).astype(np.float64)
    np.testing.assert_allclose(run(libdevice.erf, np.float64, run(libdevice.erfinv, np.float64, x)), x, rtol=1e-12)
    p = np.linspace(0.01, 0.99, 16)
    np.testing.assert_allclose(run(libdevice.normcdf, np.float64, run(libdevice.normcdfinv, np.float64, p)), p,
                               rtol=1e-12)
    np.testing.assert_allclose(run(libdevice.erfcx, np.float64, x), special.erfcx(x), rtol=1e-12)
    ints = np.arange(-4, 4, dtype=np.float32)
    assert (run(libdevice.sinpi, np.float32, ints) == 0).all()
    assert (run(libdevice.cospi, np.float32, ints + 0.5) == 0).all()
    np.testing.assert_allclose(run(libdevice.sinpi, np.float64, x), np.sin(np.pi * x), atol=1e-15)
    v = np.array([0.0, 1.0, 3.0, 0.1, -8.0, np.inf], np.float32)
    assert run(libdevice.ilogb, np.int32, v).tolist() == [-2 ** 31, 0, 1, -4, 3, 2 ** 31 - 1]
    assert run(libdevice.logb, np.float32, v).tolist() == [-np.inf, 0, 1, -4, 3, np.inf]
    assert run(libdevice.saturatef, np.float32, np.array([-1, 0.5, 2, np.nan], np.float32)).tolist() == \
        [0, 0.5, 1, 0]
    k = np.array([3, -2, 0, 10], np.int32)
    assert run(libdevice.ldexp, np.float32, np.ones(4, np.float32), k).tolist() == [8, 0.25, 1, 1024]
    assert run(libdevice.llrint, np.int64, np.array([2.5, 3.5, -2.5], np.float32)).tolist() == [2, 4, -2]
    assert run(libdevice.llround, np.int64, np.array([2.5, 3.5, -2.5], np.float32)).tolist() == [3, 4, -3]
    n, y = np.array([0, 1, 2, 5], np.int32), np.array([0.5, 1.5, 2.5, 7.0], np.float64)
    np.testing.assert_allclose(run(libdevice.jn, np.float64, n, y), special.jv(n, y), rtol=1e-12)
    np.testing.assert_allclose(run(libdevice.yn, np.float64, n, y), special.yv(n, y), rtol=1e-12)
    a, b, c = (np.array([v], np.float32) for v in (2.0, 3.0, 6.0))
    assert run(libdevice.norm3d, np.float32, a, b, c)[0] == 7.0
    assert run(libdevice.rhypot, np.float32, np.array([3.0], np.float32), np.array([4.0], np.float32))[0] == \
        np.float32(0.2)


def test_the_one_name_not_run_is_refused_by_name_and_types_are_checked():
    for module in (libdevice, cuda_libdevice):
        with pytest.raises(NotImplementedError, match="libdevice.rcp64h"):
            module.rcp64h
    with pytest.raises(Exception, match="libdevice.clz takes int32 or int64"):
        run(libdevice.clz, np.int32, np.zeros(4, np.float32))
    with pytest.raises(Exception, match="libdevice.add_rz takes fp32 or fp64"):
        run(libdevice.add_rz, np.int32, np.zeros(4, np.int32), np.zeros(4, np.int32))


def test_cuda_extras_clock_and_refusals():
    from minitriton.language.extra import cuda

    @mt.jit
    def k(out_ptr):
        t0 = cuda.globaltimer()
        t1 = cuda.globaltimer()
        tl.store(out_ptr, t1 - t0)
        tl.store(out_ptr + 1, t0)
    out = np.zeros(2, np.int64)
    k[(1,)](out)
    assert out[0] >= 0 and out[1] > 0
    for name in ("smid", "f32_to_e2m1x2_satfinite"):
        with pytest.raises(NotImplementedError, match=f"tl.extra.cuda.{name}"):
            getattr(cuda, name)


def test_cuda_intrinsics_tf32_xorsign_and_ftz():
    from minitriton.language.extra import cuda

    @mt.jit
    def k(a_ptr, b_ptr, out_ptr, N: tl.constexpr):
        offs = tl.arange(0, N)
        a, b = tl.load(a_ptr + offs), tl.load(b_ptr + offs)
        tl.store(out_ptr + offs, cuda.round_f32_to_tf32(a, "rn"))
        tl.store(out_ptr + N + offs, cuda.round_f32_to_tf32(a, "rna"))
        tl.store(out_ptr + 2 * N + offs, cuda.min_xorsign_abs_f32(a, b))
        tl.store(out_ptr + 3 * N + offs, cuda.max_xorsign_abs_f32(a, b, tl.PropagateNan.ALL))
        tl.store(out_ptr + 4 * N + offs, cuda.exp2_ftz(b))

    ulp = 2.0 ** -10                                      # TF32's spacing at 1
    a = np.array([1 + ulp / 2, 1 + 3 * ulp / 2, -(1 + ulp / 2), 1 + ulp / 4, np.inf, np.nan, -2.5, 0.0], np.float32)
    b = np.array([-3.0, 0.5, 2.0, np.nan, 1e-45, -130.0, 3.0, -1.0], np.float32)
    out = np.empty(5 * 8, np.float32)
    k[(1,)](a, b, out, 8)
    rn, rna, mn, mx, ex = out.reshape(5, 8)
    np.testing.assert_array_equal(rn[:5], [1.0, 1 + 2 * ulp, -1.0, 1.0, np.inf])       # ties to even
    np.testing.assert_array_equal(rna[:5], [1 + ulp, 1 + 2 * ulp, -(1 + ulp), 1.0, np.inf])   # ties away
    assert np.isnan(rn[5]) and np.isnan(rna[5])
    np.testing.assert_array_equal(mn[[0, 1, 2, 6, 7]], [-(1 + ulp / 2), 0.5, -(1 + ulp / 2), -2.5, -0.0])
    assert mn[3] == 1 + ulp / 4                            # a NaN loses by default
    assert np.isnan(mx[3]) and mx[0] == -3.0 and mx[6] == -3.0    # ... not with PropagateNan.ALL
    np.testing.assert_array_equal(ex[[0, 1, 2, 4, 6]], np.float32([0.125, 2 ** 0.5, 4.0, 1.0, 8.0]))  # 1e-45 flushed: 2**0
    assert ex[5] == 0.0                                    # 2**-130 is subnormal: flushed


def test_cuda_custom_fp8_conversions_are_the_gpu_bit_arithmetic():
    from minitriton.language.extra import cuda

    @mt.jit
    def up(x_ptr, out_ptr, N: tl.constexpr):
        offs = tl.arange(0, N)
        tl.store(out_ptr + offs, cuda.convert_custom_float8_sm80(tl.load(x_ptr + offs), tl.float16))

    @mt.jit
    def down(x_ptr, out_ptr, N: tl.constexpr, SM70: tl.constexpr):
        offs = tl.arange(0, N)
        x = tl.load(x_ptr + offs)
        if SM70:
            y = cuda.convert_custom_float8_sm70(x, tl.float8e4b15)
        else:
            y = cuda.convert_custom_float8_sm80(x, tl.float8e4b15)
        tl.store(out_ptr + offs, y)

    codes = np.arange(256, dtype=np.uint8)
    halves = np.empty(256, np.float16)
    up[(1,)](mt.reinterpret(codes, tl.float8e4b15), halves, 256)
    bits = halves.view(np.uint16).astype(np.int64)
    np.testing.assert_array_equal(bits, ((codes & 0x80).astype(np.int64) << 8) | ((codes & 0x7F).astype(np.int64) << 7))
    assert halves[0x38] == 2.0 ** -8 and halves[0x78] == 1.0 and halves[0x7F] == 1.875 and halves[0xB8] == -(2.0 ** -8)
    back = np.empty(256, np.uint8)
    for sm70 in (False, True):
        down[(1,)](halves, mt.reinterpret(back, tl.float8e4b15), 256, sm70)
        want = codes.copy()
        want[[0x7F, 0xFF]] = [0x7E, 0xFE]                  # 1.875 is clamped to 1.75
        np.testing.assert_array_equal(back, want)
    f32 = np.array([1.0, 100.0, -np.inf, np.nan, 1.0 + 2.0 ** -5, 1.0 + 2.0 ** -4, -0.3, 0.0], np.float32)
    out = np.empty(8, np.uint8)
    down[(1,)](f32, mt.reinterpret(out, tl.float8e4b15), 8, False)
    # fp8's step at 1 is 2**-3: 1+2**-5 (a quarter step) goes down, 1+2**-4 (half a step) up; -0.3
    # is truncated to fp16 first (0xB4CC), then 2*0x34CC+0x80 = 0x6A18 gives 0x6A, with the sign
    np.testing.assert_array_equal(out, [0x78, 0x7E, 0xFE, 0x7E, 0x78, 0x79, 0xEA, 0x00])


def test_triton_2_kernels_find_libdevice_in_tl_math():
    """Triton 2.1-2.3 kept libdevice's functions in `tl.math`; a kernel of then calls
    `tl.math.tanh` and `tl.math.pow`.  They are libdevice's, and tl.math lists none of them."""
    x = np.linspace(0.1, 2, 8).astype(np.float32)
    y = np.linspace(-1, 1, 8).astype(np.float32)
    out = np.empty(8, np.float32)
    apply1[(1,)](x, out, 8, N=8, FN=tl.math.tanh)
    np.testing.assert_allclose(out, np.tanh(x), rtol=2e-6)
    apply2[(1,)](x, y, out, 8, N=8, FN=tl.math.pow)
    np.testing.assert_allclose(out, x.astype(np.float64) ** y, rtol=2e-6)
    assert tl.math.llrint is cuda_libdevice.llrint and "tanh" not in tl.math.__all__
    with pytest.raises(AttributeError, match="has no attribute 'where'"):
        tl.math.where


def test_triton_2_0_kernels_find_tl_libdevice_and_float8e4():
    x = np.linspace(-2, 2, 8).astype(np.float32)
    out = np.empty(8, np.float32)
    apply1[(1,)](x, out, 8, N=8, FN=tl.libdevice.tanh)
    np.testing.assert_allclose(out, np.tanh(x), rtol=2e-6)
    assert tl.float8e4 is tl.float8e4nv          # renamed in Triton 2.2
