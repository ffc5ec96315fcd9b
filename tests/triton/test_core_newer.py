"""Triton's test_core.py at a newer commit than test_core.py's port: the tests added since, or
not held by the earlier port, that run on Triton's interpreter: fp8 `abs`, scattered atomic adds
with duplicate targets (which Triton's interpreter skips; they run here), cooperative-grid
launches, a kernel storing to the pointer it loads from, a Welford reduction over a tuple, and
the tensor descriptor's 16-byte block rule.

Source: triton-lang/triton at commit 6fa33ef1eecc97348d056688df84845db7d22507 (MIT licence).
Kernels unchanged; host code ours on numpy.  Left out: `test_convert_float16_to_float32` (it
tests a torch helper of the file, no kernel), `test_load_scope_sem_coop_grid_cta_not_one`
(Hopper only: four CTAs per cluster).
"""
import math

import numpy as np
import pytest

import minitriton as triton                 # was: import triton
import minitriton.language as tl            # was: import triton.language as tl

from .helpers import fp8_to_float32


@pytest.mark.parametrize("in_dtype", [tl.float8e4b15, tl.float8e4nv, tl.float8e5])
def test_abs_fp8(in_dtype, device):

    @triton.jit
    def abs_kernel(X, Z, SIZE: tl.constexpr):
        off = tl.arange(0, SIZE)
        x = tl.load(X + off)
        z = tl.abs(x)
        tl.store(Z + off, z)

    f8_tensor = np.arange(-128, 128, dtype=np.int8)
    # f32_to_f8 doesn't handle nan, so we make sure f8_tensor doesn't contain any nan
    all_exp_ones = (f8_tensor & 0b01111100) == 128 - 2**in_dtype.fp_mantissa_width
    f8_tensor[all_exp_ones] = 0
    f8 = triton.reinterpret(f8_tensor, in_dtype)
    n_elements = f8_tensor.size
    out_f8 = np.empty_like(f8_tensor)
    abs_kernel[(1, )](f8, triton.reinterpret(out_f8, in_dtype), n_elements)

    name = {tl.float8e4b15: "float8e4b15", tl.float8e4nv: "float8e4nv", tl.float8e5: "float8e5"}[in_dtype]
    expect = np.abs(fp8_to_float32(f8_tensor.view(np.uint8), name))
    actual = fp8_to_float32(out_f8.view(np.uint8), name)
    np.testing.assert_equal(actual, expect)


# Triton's interpreter skips this test ("not supported in the interpreter"); it runs here.
@pytest.mark.parametrize("shape, idx_order, mask_step, num_ctas, dtype_x_str",
                         [(shape, idx_order, mask_step, 1, dtype_x_str)
                          for shape in [(2, 2), (5, 5), (8, 8)]             # Triton: five shapes
                          for idx_order in ['increase', 'decrease', 'random_no_duplication', 'random']
                          for mask_step in range(1, 5)
                          for dtype_x_str in ['float16', 'float32']])
def test_tensor_atomic_add_access_patterns(shape, idx_order, mask_step, num_ctas, dtype_x_str, device):

    @triton.jit
    def kernel(in_ptr, idx_ptr, out_ptr, shape0, shape1, mask_step, XBLOCK: tl.constexpr):
        xoffset = tl.program_id(0) * XBLOCK
        x_idx = xoffset + tl.arange(0, XBLOCK)[:]
        mask = x_idx < shape0 * shape1
        mask = mask and (x_idx % mask_step != 0)
        idx_base = shape1 * (x_idx // shape1)
        idx_offset = tl.load(idx_ptr + x_idx, mask)
        in_elem = tl.load(in_ptr + x_idx, mask)
        tl.atomic_add(out_ptr + (idx_offset + idx_base), in_elem, mask, sem='relaxed')

    shape0, shape1 = shape
    rs = np.random.RandomState(17)
    idx_row = np.arange(0, shape1)
    if idx_order == 'increase':
        idx = np.stack([np.repeat(idx_row, i + 1)[:shape1] for i in range(shape0)])
    if idx_order == 'decrease':
        idx = np.stack([np.repeat(idx_row[::-1], i + 1)[:shape1] for i in range(shape0)])
    if idx_order == 'random_no_duplication':
        idx = np.stack([rs.permutation(shape1) for _ in range(shape0)])
    if idx_order == 'random':
        idx = rs.randint(0, shape1, size=(shape0, shape1))
    idx = idx.astype(np.int64)

    val = rs.randn(shape0, shape1).astype(dtype_x_str)
    dst = rs.randn(shape0, shape1).astype(dtype_x_str)

    dst_ref = dst.astype(np.float32)
    cnt = 0
    for i, row in enumerate(idx):
        for j, elem in enumerate(row):
            if cnt % mask_step != 0:
                dst_ref[i][elem] += val[i][j]
            cnt += 1

    kernel[(1, )](val, idx, dst, shape0, shape1, mask_step, 64, num_ctas=num_ctas)
    np.testing.assert_allclose(dst_ref, dst.astype(np.float32), atol=1e-2)


def test_load_scope_sem_coop_grid_cta_one(device):

    @triton.jit
    def kernel_r(ptrs, BLOCK_SIZE: tl.constexpr):
        numel = 512
        offset = tl.program_id(0) * BLOCK_SIZE
        index = offset
        mask = index < numel
        a = tl.load(ptrs, mask=mask)
        tl.store(ptrs, a)

    block_size = 128
    data = np.zeros((128, ), dtype=np.float32)

    # Should do nothing different for num_ctas=1 (with coop launch grid)
    kernel_r[(2, )](data, BLOCK_SIZE=block_size, num_ctas=1, launch_cooperative_grid=True)
    kernel_r[(2, )](data, BLOCK_SIZE=block_size, num_ctas=1, launch_cooperative_grid=False)
    assert (data == 0).all()


def test_load_store_same_ptr(device):

    @triton.jit()
    def kernel(in_out_ptr):
        pid = tl.program_id(axis=0)
        x = tl.load(in_out_ptr + pid)
        out = x * 2
        tl.store(in_out_ptr + pid, out)

    for _ in range(20):     # Triton: 1000 repetitions (they look for a race on a GPU)
        x = np.ones((65536, ), dtype=np.float32)
        kernel[(65536, )](x, num_warps=32)
        assert np.all(x == 2)


@triton.jit
def _welford_combine(mean_1, m2_1, weight_1, mean_2, m2_2, weight_2):
    delta = mean_2 - mean_1
    new_weight = weight_1 + weight_2
    w2_over_w = weight_2 / new_weight
    return (
        mean_1 + delta * w2_over_w,
        m2_1 + m2_2 + delta * delta * weight_1 * w2_over_w,
        new_weight,
    )


def test_generic_reduction(device):

    @triton.jit
    def var_mean_kernel(X, out_mean, out_var, BLOCK: tl.constexpr):
        xindex = tl.arange(0, BLOCK)
        x = tl.load(X + xindex)
        mean = x
        m2 = tl.zeros_like(x)
        weight = tl.full(x.shape, 1, x.dtype)
        (mean, m2, weight) = tl.reduce((mean, m2, weight), 0, _welford_combine)
        tl.store(out_mean, mean)
        tl.store(out_var, m2 / weight)

    SIZE = 512
    x = np.random.RandomState(0).rand(SIZE).astype(np.float32)
    out_mean = np.empty((), dtype=np.float32)
    out_var = np.empty((), dtype=np.float32)

    var_mean_kernel[(1, )](x, out_mean, out_var, BLOCK=SIZE)

    np.testing.assert_allclose(out_mean, x.astype(np.float64).mean(), rtol=1.3e-6, atol=1e-5)
    np.testing.assert_allclose(out_var, x.astype(np.float64).var(), rtol=1.3e-6, atol=1e-5)


def test_tma_load_block_shape_err(device):

    @triton.jit
    def kernel(ptr):
        desc = tl.make_tensor_descriptor(ptr, [128, 128], [128, 1], [1, 2])
        desc.load([0, 0])

    input = np.empty((128, 128), dtype=np.int32)
    with pytest.raises(triton.TritonError) as e:     # Triton's interpreter: InterpreterError
        kernel[(1, )](input)

    assert "Descriptor block shape must have at least 16 bytes" in str(e.value.__cause__)


def test_tma_store_block_shape_err(device):

    @triton.jit
    def kernel(ptr):
        desc = tl.make_tensor_descriptor(ptr, [128, 128], [128, 1], [8, 4])
        desc.store([0, 0], tl.zeros([8, 4], dtype=tl.int16))

    input = np.empty((128, 128), dtype=np.int16)
    with pytest.raises(triton.TritonError) as e:
        kernel[(1, )](input)

    assert "Descriptor block shape must have at least 16 bytes" in str(e.value.__cause__)
