"""Triton's python/test/unit/language/test_mixed_io.py, ported to minitriton: a block pointer
and plain pointers in one kernel (vector add with a boundary-checked, zero-padded block load), and
a 2-D block-pointer load reduced by `tl.max`.

Source: triton-lang/triton (MIT licence), the stored copy at commit
84f3dd2029f3478b4a19e9e5fe3adc28aae765ca.  Kernels unchanged; host code ours on numpy
(torch.randn -> numpy's standard_normal, torch.testing.assert_close -> numpy's assert_allclose).
"""
import numpy as np
import pytest

import minitriton as triton                 # was: import triton
import minitriton.language as tl            # was: import triton.language as tl

dtype_mapping = {
    'float16': np.float16,
    'float32': np.float32,
}


@triton.jit
def add_kernel(
    x_ptr,
    y_ptr,
    output_ptr,
    n_elements,
    BLOCK_SIZE: tl.constexpr,
):
    pid = tl.program_id(axis=0)  # We use a 1D launch grid so axis is 0.
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements

    x_block_ptr = tl.make_block_ptr(base=x_ptr, shape=(n_elements, ), strides=(1, ), offsets=(pid * BLOCK_SIZE, ),
                                    block_shape=(BLOCK_SIZE, ), order=(0, ))
    x = tl.load(x_block_ptr, boundary_check=(0, ), padding_option='zero')

    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    tl.store(output_ptr + offsets, output, mask=mask)


@pytest.mark.parametrize('SIZE,BLOCK_SIZE,dtype_str',
                         [(98432, 1024, dtype_str) for dtype_str in ['float16', 'float32']])
def test_add(SIZE, BLOCK_SIZE, dtype_str):
    dtype = dtype_mapping[dtype_str]
    rng = np.random.default_rng(0)
    output = np.empty(SIZE, dtype=dtype)
    x = rng.standard_normal(SIZE).astype(dtype)
    y = rng.standard_normal(SIZE).astype(dtype)

    def grid(meta):
        return (triton.cdiv(SIZE, meta['BLOCK_SIZE']), )

    add_kernel[grid](x, y, output, SIZE, BLOCK_SIZE=BLOCK_SIZE)

    output_ref = x + y
    np.testing.assert_allclose(output.astype(np.float32), output_ref.astype(np.float32), rtol=1e-2, atol=1e-3)


@triton.jit
def load_reduce_kernel(
    x_ptr,
    y_ptr,
    stride_xm,
    stride_xn,
    stride_y,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    x_ptr = tl.make_block_ptr(base=x_ptr, shape=(BLOCK_M, BLOCK_N), strides=(stride_xm, stride_xn), offsets=(0, 0),
                              block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))
    x = tl.load(x_ptr)
    y = tl.max(x, axis=1)
    tl.store(y_ptr + tl.arange(0, BLOCK_M), y)


@pytest.mark.parametrize('BLOCK_M,BLOCK_N,dtype_str', [(128, 64, dtype_str) for dtype_str in ['float16']])
def test_load_reduce(BLOCK_M, BLOCK_N, dtype_str):
    dtype = dtype_mapping[dtype_str]
    x = np.random.default_rng(1).standard_normal((BLOCK_M, BLOCK_N)).astype(dtype)
    y = np.empty((BLOCK_M, ), dtype=dtype)

    load_reduce_kernel[(1, )](x, y, x.strides[0] // x.itemsize, x.strides[1] // x.itemsize, y.strides[0] // y.itemsize,
                              BLOCK_M, BLOCK_N)

    golden = x.max(axis=1)
    np.testing.assert_allclose(y.astype(np.float32), golden.astype(np.float32), rtol=1e-2, atol=1e-3)
