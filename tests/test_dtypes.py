"""Element types as Triton states them (issue 28): the attributes Triton's tests and kernels read
off a dtype, its printed name, and conversions that round toward zero."""
import ml_dtypes
import numpy as np
import pytest

import minitriton as mt
import minitriton.language as tl


@mt.jit
def downcast_kernel(x_ptr, y_ptr, N: tl.constexpr, DST: tl.constexpr, MODE: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, x.to(DST, fp_downcast_rounding=MODE))


def values(n=4096, seed=0):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * np.exp2(rng.integers(-20, 20, n))).astype(np.float32)
    x[:6] = [70000.0, -70000.0, 65504.0, 1.0 + 2.0 ** -11, -(1.0 + 3 * 2.0 ** -12), 0.0]
    return x


def test_rtz_to_fp16_rounds_toward_zero():
    x = values()
    y = np.empty(x.size, np.float16)
    downcast_kernel[(1,)](x, y, N=x.size, DST=tl.float16, MODE="rtz")
    with np.errstate(over="ignore"):
        near = x.astype(np.float16)                  # numpy: to nearest, ties to even
    farther = np.abs(near.astype(np.float64)) > np.abs(x.astype(np.float64))
    expect = np.where(farther, np.nextafter(near, np.float16(0)), near)
    assert np.array_equal(y.view(np.uint16), expect.view(np.uint16))
    assert y[0] == 65504 and y[1] == -65504            # no rounding up to infinity
    assert y[3] == 1.0 and farther.sum() > 1000        # half of the values differ from round-to-nearest


def test_rtz_to_bf16_truncates_the_fp32_bits():
    x = values(seed=1)
    y = np.empty(x.size, ml_dtypes.bfloat16)
    downcast_kernel[(1,)](x, y, N=x.size, DST=tl.bfloat16, MODE="rtz")
    expect = (x.view(np.uint32) >> 16).astype(np.uint16)   # bf16 is fp32's top half: rtz drops the rest
    assert np.array_equal(y.view(np.uint16), expect)
    y_near = np.empty(x.size, ml_dtypes.bfloat16)
    downcast_kernel[(1,)](x, y_near, N=x.size, DST=tl.bfloat16, MODE="rtne")
    assert np.array_equal(y_near.view(np.uint16), x.astype(ml_dtypes.bfloat16).view(np.uint16))


def test_rounding_is_refused_where_triton_refuses_it():
    x = values(64)
    with pytest.raises(ValueError, match="only for truncating fp conversions"):
        downcast_kernel[(1,)](x, np.empty(64, np.int32), N=64, DST=tl.int32, MODE="rtz")
    with pytest.raises(ValueError, match="fp_downcast_rounding must be one of"):
        downcast_kernel[(1,)](x, np.empty(64, np.float16), N=64, DST=tl.float16, MODE="up")


def test_dtype_attributes_as_triton_has_them():
    assert repr(tl.int8) == "triton.language.int8" and str(tl.float16) == "fp16"
    assert (tl.float16.fp_mantissa_width, tl.bfloat16.fp_mantissa_width, tl.float32.fp_mantissa_width,
            tl.float64.fp_mantissa_width, tl.float8e4nv.fp_mantissa_width, tl.float8e5.fp_mantissa_width) == \
        (10, 7, 23, 52, 3, 2)
    assert (tl.float16.exponent_bias, tl.bfloat16.exponent_bias, tl.float8e4nv.exponent_bias) == (15, 127, 7)
    assert tl.int16.int_bitwidth == 16 and tl.uint8.int_signedness == tl.dtype.SIGNEDNESS.UNSIGNED
    assert tl.int8.int_signedness == tl.dtype.SIGNEDNESS.SIGNED and tl.int1.is_int_unsigned()
    assert tl.int8.get_int_max_value() == 127 and tl.uint16.get_int_max_value() == 65535
    assert tl.int32.get_int_min_value() == -2 ** 31
    with pytest.raises(AttributeError, match="not a floating type"):
        tl.int32.fp_mantissa_width
    assert tl.pi32_t == tl.pointer_type(tl.int32) and tl.pi32_t.element_ty is tl.int32


@mt.jit
def const_kernel(x_ptr: tl.const, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs) * 2)


def test_a_pointer_annotated_const_reads_as_any_other():
    x, y = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    const_kernel[(1,)](x, y, N=8)
    assert np.array_equal(y, 2 * x)


# ---------------------------------------------------------------- shapes and checks Triton makes
@mt.jit
def expand_kernel(y_ptr, AXIS: tl.constexpr):
    x = tl.arange(0, 4)
    y = tl.expand_dims(x, AXIS)
    tl.store(y_ptr + tl.arange(0, 4), tl.reshape(y, 4))


def test_expand_dims_refuses_an_invalid_or_repeated_axis():
    y = np.zeros(4, np.int32)
    expand_kernel[(1,)](y, AXIS=-2)
    assert np.array_equal(y, np.arange(4))
    with pytest.raises(ValueError, match="invalid axis 2"):
        expand_kernel[(1,)](y, AXIS=2)
    with pytest.raises(ValueError, match="duplicate axes"):
        expand_kernel[(1,)](y, AXIS=(0, -3))    # both the first axis of the rank-3 result


@mt.jit
def reshape_kernel(y_ptr):
    x = tl.arange(0, 8)
    a = tl.reshape(x, 2, 4)            # the shape as separate arguments
    b = x.reshape(4, 2).reshape((2, 4))
    tl.store(y_ptr + tl.arange(0, 2)[:, None] * 4 + tl.arange(0, 4)[None, :], a + b)


def test_reshape_takes_the_shape_as_one_tuple_or_separate_arguments():
    y = np.zeros(8, np.int32)
    reshape_kernel[(1,)](y)
    assert np.array_equal(y, 2 * np.arange(8))


@mt.jit
def pid_kernel(y_ptr, AXIS: tl.constexpr):
    tl.store(y_ptr, tl.program_id(AXIS) + tl.num_programs(AXIS))


def test_program_id_axis_must_be_0_1_or_2():
    y = np.zeros(1, np.int32)
    pid_kernel[(1, 1, 3)](y, AXIS=2)
    assert y[0] in (3, 4, 5)
    with pytest.raises(ValueError, match="program_id axis must be 0, 1, or 2 but got 3"):
        pid_kernel[(1,)](y, AXIS=3)


@mt.jit
def wide_pid_kernel(y_ptr, WIDTH: tl.constexpr):
    pid = tl.program_id(0, bitwidth=WIDTH)
    tl.store(y_ptr + pid, pid * 1_000_000 * 10_000)     # past int32 only when the id is int64


def test_program_id_bitwidth_64_gives_int64_ids_and_other_widths_are_refused():
    y = np.zeros(3, np.int64)
    wide_pid_kernel[(3,)](y, WIDTH=64)
    assert y.tolist() == [0, 10**10, 2 * 10**10]
    with pytest.raises(ValueError, match="program_id bitwidth must be 32 or 64, got 48"):
        wide_pid_kernel[(3,)](y, WIDTH=48)


@mt.jit
def scalar_kernel(y_ptr, v):
    tl.store(y_ptr, v)


def test_an_integer_argument_out_of_64_bits_raises_overflow_error():
    y = np.zeros(1, np.uint64)
    scalar_kernel[(1,)](y, 2 ** 64 - 1)                  # uint64, as Triton types it
    assert y[0] == 2 ** 64 - 1
    for v in (2 ** 64, -2 ** 63 - 1):
        with pytest.raises(OverflowError, match="argument 'v': integer argument .* not representable in 64 bits"):
            scalar_kernel[(1,)](np.zeros(1, np.int64), v)


# ---------------------------------------------------------------- annotated scalar arguments
@mt.jit
def annotated_kernel(y_ptr, v: tl.uint8, h: "tl.float16", n: int):
    tl.store(y_ptr, v + 255)            # a uint8 plus a literal that fits: uint8, wraps around
    tl.store(y_ptr + 1, (h * 1.0).to(tl.float32) * 0 + (h.dtype == tl.float16))
    tl.store(y_ptr + 2, n + (n.dtype == tl.int32) * 100)


def test_an_annotation_types_a_scalar_argument_as_triton_does():
    y = np.zeros(3, np.float64)
    annotated_kernel[(1,)](y, 3, 0.1, 1)        # an annotated 1 is an int32, not a constant
    assert y.tolist() == [2.0, 1.0, 101.0]


@mt.jit
def half_kernel(y_ptr, h: tl.float16):
    tl.store(y_ptr, h)


def test_a_float_annotation_rounds_the_argument_to_its_type():
    y = np.zeros(1, np.float32)
    half_kernel[(1,)](y, 0.1)
    assert y[0] == np.float32(np.float16(0.1)) != np.float32(0.1)


def test_a_value_the_annotated_type_cannot_hold_is_refused_naming_the_argument():
    with pytest.raises(OverflowError, match="argument 'v': 256 does not fit uint8"):
        annotated_kernel[(1,)](np.zeros(3), 256, 0.1, 1)
    with pytest.raises(TypeError, match="argument 'v': 2.5 cannot be passed as uint8"):
        annotated_kernel[(1,)](np.zeros(3), 2.5, 0.1, 1)
    with pytest.raises(OverflowError, match="argument 'n': 2147483648 does not fit int32"):
        annotated_kernel[(1,)](np.zeros(3), 1, 0.1, 2 ** 31)


def test_annotations_that_name_no_scalar_type_change_nothing():
    from minitriton.dtypes import annotated_type
    assert annotated_type(np.ndarray) is None and annotated_type("*fp32") is None
    assert annotated_type(tl.constexpr) is None and annotated_type("torch.Tensor") is None
    assert annotated_type("tl.uint8") is tl.uint8 and annotated_type(int) is tl.int32
    assert annotated_type(float) is tl.float32 and annotated_type("bf16") is tl.bfloat16


SEEN_TYPES = {}      # filled by _types_kernel (a global the kernel reads: TRITON_ALLOW_NON_CONSTEXPR_GLOBALS)


@mt.jit
def _types_kernel(x_ptr, out_ptr, B: tl.constexpr):
    v = tl.load(x_ptr + tl.arange(0, B)[:, None] * B + tl.arange(0, B)[None, :])
    s = tl.sum(v)
    SEEN_TYPES.update(block=v.type, scalar=s.type, pointer=x_ptr.type, pointers=(x_ptr + tl.arange(0, B)).type)
    tl.static_assert(v.type == tl.block_type(tl.float32, [B, B]))
    tl.static_assert(v.type.is_block() and not s.type.is_block())
    tl.store(out_ptr, s)


def test_a_blocks_type_is_a_block_type_and_a_scalars_its_dtype(monkeypatch):
    """Triton's `x.type`: code tells blocks from scalars by `x.type.is_block()` and reads
    `x.type.element_ty` / `.shape`; a block type answers anything else as its element type."""
    monkeypatch.setenv("TRITON_ALLOW_NON_CONSTEXPR_GLOBALS", "1")
    x, out = np.ones((4, 4), np.float32), np.zeros(1, np.float32)
    _types_kernel[(1,)](x, out, B=4)
    assert out[0] == 16
    block = SEEN_TYPES["block"]
    assert block.shape == (4, 4) and block.element_ty is tl.float32 and block.scalar is tl.float32
    assert block.numel == 16 and block.is_floating() and block.primitive_bitwidth == 32
    assert repr(block) == "<(4, 4), fp32>" and block != tl.block_type(tl.float32, [4, 2])
    assert SEEN_TYPES["scalar"] is tl.float32 and SEEN_TYPES["pointer"].element_ty is tl.float32
    assert SEEN_TYPES["pointers"].is_block() and SEEN_TYPES["pointers"].element_ty.is_ptr()
    with pytest.raises(TypeError, match="block_type needs a shape"):
        tl.block_type(tl.float32, [])


@mt.jit
def _e8m0_scaled(x_ptr, s_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    s = tl.load(s_ptr + offs)
    tl.store(out_ptr + offs, s)                                   # stored as it is
    bits = s.to(tl.uint8, bitcast=True).to(tl.uint32) << 23       # 2**(code - 127) as fp32 bits
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) * bits.to(tl.float32, bitcast=True))


def test_e8m0_scales_are_loaded_stored_and_bitcast_never_computed_with():
    scales = np.array([0.5, 1, 2, 2.0 ** 100], ml_dtypes.float8_e8m0fnu)
    x = np.ones(4, np.float32)
    copy = np.zeros(4, ml_dtypes.float8_e8m0fnu)
    _e8m0_scaled[(1,)](x, scales, copy, N=4)
    np.testing.assert_array_equal(x, [0.5, 1, 2, 2.0 ** 100])
    np.testing.assert_array_equal(copy.view(np.uint8), scales.view(np.uint8))
    assert tl.float8e8m0fnu.is_storage_only() and not tl.float32.is_storage_only()


@mt.jit
def _scaled_product(a_ptr, s_ptr, b_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    a = tl.load(a_ptr + tl.arange(0, M)[:, None] * K + tl.arange(0, K)[None, :])
    s = tl.load(s_ptr + tl.arange(0, M)[:, None] * (K // 32) + tl.arange(0, K // 32)[None, :])
    b = tl.load(b_ptr + tl.arange(0, K)[:, None] * N + tl.arange(0, N)[None, :])
    out = tl.dot_scaled(a, s, "e4m3", b, None, "bf16")
    tl.store(out_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], out)


def test_dot_scaled_takes_e8m0_typed_scales_as_their_bytes():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((16, 64)).astype(ml_dtypes.float8_e4m3fn)
    b = rng.standard_normal((64, 16)).astype(ml_dtypes.bfloat16)
    codes = rng.integers(120, 134, (16, 2), dtype=np.uint8)
    by_bytes, by_type = np.zeros((16, 16), np.float32), np.zeros((16, 16), np.float32)
    _scaled_product[(1,)](a, codes, b, by_bytes, M=16, N=16, K=64)
    _scaled_product[(1,)](a, codes.view(ml_dtypes.float8_e8m0fnu), b, by_type, M=16, N=16, K=64)
    np.testing.assert_array_equal(by_bytes, by_type)
    want = (a.astype(np.float32) * np.repeat(2.0 ** (codes.astype(np.float32) - 127), 32, axis=1)) @ b.astype(np.float32)
    np.testing.assert_allclose(by_type, want, rtol=1e-5, atol=1e-4)
