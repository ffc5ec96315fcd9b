"""The language Triton 3.7-3.9 added (their release notes): atomic loads and stores, a poll on a
flag, `expect_zero`, `fdiv(..., approx=True)`, chained comparisons (tests/test_divergence.py),
`squeeze` / `unsqueeze`, and integer `clamp`."""
import re

import numpy as np
import pytest

import minitriton as mt
import minitriton.language as tl


@mt.jit
def publish_kernel(data_ptr, flag_ptr, out_ptr):
    """Program 0 publishes a value and raises a flag (release); the others spin on the flag
    (acquire) and then read the value: the classic message-passing pattern."""
    pid = tl.program_id(0)
    if pid == 0:
        tl.store(data_ptr, 42)
        tl.atomic_store(flag_ptr, 1)
    else:
        while tl.atomic_load(flag_ptr) == 0:
            pass
        tl.store(out_ptr + pid, tl.load(data_ptr))


def test_atomic_load_and_store_pass_a_message_between_programs():
    data, flag, out = np.zeros(1, np.int32), np.zeros(1, np.int32), np.zeros(4, np.int32)
    publish_kernel[(4,)](data, flag, out)
    np.testing.assert_array_equal(out, [0, 42, 42, 42])
    assert flag[0] == 1


@mt.jit
def ordering_kernel(p, SEM_LOAD: tl.constexpr, SEM_STORE: tl.constexpr):
    offs = tl.arange(0, 4)
    v = tl.atomic_load(p + offs, mask=offs < 2, sem=SEM_LOAD)
    (p + 4 + offs).atomic_store(v + 1, sem=SEM_STORE)        # a tensor method too


def test_atomic_load_and_store_take_triton_39s_orders_and_masks():
    p = np.arange(8, dtype=np.int32)
    ordering_kernel[(1,)](p, "relaxed", "release")
    np.testing.assert_array_equal(p[4:], [1, 2, 1, 1])      # masked lanes load 0 here (unspecified)
    with pytest.raises(ValueError, match=re.escape("tl.atomic_load: sem must be one of ('acquire', 'relaxed'), "
                                                   "got 'release'")):
        ordering_kernel[(1,)](p, "release", None)
    with pytest.raises(ValueError, match="tl.atomic_store: sem must be one of .'release', 'relaxed'., got 'acquire'"):
        ordering_kernel[(1,)](p, None, "acquire")


@mt.jit
def poll_kernel(flag_ptr, out_ptr, EXPECTED, TIMEOUT: tl.constexpr):
    ok = tl.atomic_poll(flag_ptr, EXPECTED, timeout_ns=TIMEOUT)
    tl.store(out_ptr, ok.to(tl.int32))


def test_atomic_poll_sees_a_stored_value_and_times_out_or_says_it_cannot_wait():
    flag, out = np.array([3], np.int32), np.zeros(1, np.int32)
    poll_kernel[(1,)](flag, out, 3, None)
    assert out[0] == 1
    poll_kernel[(1,)](flag, out, 5, 1000)
    assert out[0] == 0
    with pytest.raises(NotImplementedError, match="tl.atomic_poll without a timeout"):
        poll_kernel[(1,)](flag, out, 5, None)
    with pytest.raises(ValueError, match="scalar 16-, 32- or 64-bit integer"):
        poll_kernel[(1,)](np.zeros(1, np.float32), out, 5, 0)


@mt.jit
def expect_zero_kernel(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    y = tl.expect_zero(tl.load(x_ptr + offs), offs == 0)
    tl.store(out_ptr + offs, y * 2)


def test_expect_zero_keeps_its_values_and_asserts_them_in_debug_mode():
    x, out = np.array([0, 1, 2, 3], np.float32), np.zeros(4, np.float32)
    expect_zero_kernel[(1,)](x, out, 4, debug=True)             # zero where the mask holds
    np.testing.assert_array_equal(out, 2 * x)
    x[0] = 1
    expect_zero_kernel[(1,)](x, out, 4)                         # not checked without debug
    with pytest.raises(RuntimeError, match="expected to be zero"):
        expect_zero_kernel[(1,)](x, out, 4, debug=True)


@mt.jit
def shapes_kernel(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    q = tl.fdiv(x, 3.0, approx=True)
    c = tl.clamp(offs, 1, N - 2)                                # integers since 3.9
    s = tl.squeeze(tl.unsqueeze(c, 0), 0)
    tl.store(out_ptr + offs, q + s)


def test_approximate_division_integer_clamp_and_squeeze():
    x, out = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    shapes_kernel[(1,)](x, out, 8)
    np.testing.assert_allclose(out, x / 3 + np.clip(np.arange(8), 1, 6), rtol=1e-6)


@mt.jit
def topk_kernel(x_ptr, out_ptr, K: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 8))
    top = tl.topk(x, K)
    tl.store(out_ptr + tl.arange(0, K), top)


def test_topk_takes_a_power_of_two_k_no_larger_than_its_block():
    x, out = np.arange(8, dtype=np.int32), np.zeros(8, np.int32)
    topk_kernel[(1,)](x, out, 4)
    np.testing.assert_array_equal(out[:4], [7, 6, 5, 4])
    for k in (3, 16):
        with pytest.raises(ValueError, match=f"tl.topk: k={k} must be a power of 2"):
            topk_kernel[(1,)](x, out, k)


@mt.jit
def histogram_width_kernel(x_ptr, h_ptr, DT: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 8)).to(DT)
    tl.store(h_ptr + tl.arange(0, 4), tl.histogram(x, 4))


@pytest.mark.parametrize("dt", [tl.int16, tl.int64, tl.uint8])
def test_histogram_takes_32_bit_integers_as_triton_39_requires(dt):
    x, h = np.arange(8, dtype=np.int32) % 4, np.zeros(4, np.int32)
    histogram_width_kernel[(1,)](x, h, tl.uint32)
    np.testing.assert_array_equal(h, [2, 2, 2, 2])
    with pytest.raises(ValueError, match=f"tl.histogram needs 32-bit integers .int32 or uint32., got {dt}"):
        histogram_width_kernel[(1,)](x, h, dt)


@mt.jit
def xorsign_kernel(a_ptr, b_ptr, out_ptr):
    offs = tl.arange(0, 4)
    a, b = tl.load(a_ptr + offs), tl.load(b_ptr + offs)
    tl.store(out_ptr + offs, tl.extra.cuda.min_nan_xorsign_abs_f32(a, b))
    tl.store(out_ptr + 4 + offs, tl.extra.cuda.max_nan_xorsign_abs_f32(a, b))


def test_triton_37s_cuda_names_and_descriptor_options():
    """tl.extra.cuda's NaN-propagating xorsign min/max (PTX min.NaN.xorsign.abs.f32), the fp4 pair
    conversion refused by name, and TensorDescriptor's round_f32_to_tf32 option (off runs; on is
    refused by name)."""
    from minitriton.tools.tensor_descriptor import TensorDescriptor
    a = np.array([1, -2, np.nan, 3], np.float32)
    b = np.array([-3, -1, 1, 5], np.float32)
    out = np.zeros(8, np.float32)
    xorsign_kernel[(1,)](a, b, out)
    np.testing.assert_array_equal(out, [-1, 1, np.nan, 3, -3, 2, np.nan, 5])
    with pytest.raises(NotImplementedError, match="f32_to_e2m1x2"):
        tl.extra.cuda.f32_to_e2m1x2
    x = np.zeros((16, 16), np.float32)
    assert not TensorDescriptor.from_tensor(x, [16, 16], round_f32_to_tf32=False).round_f32_to_tf32
    with pytest.raises(NotImplementedError, match="round_f32_to_tf32=True"):
        TensorDescriptor.from_tensor(x, [16, 16], round_f32_to_tf32=True)
