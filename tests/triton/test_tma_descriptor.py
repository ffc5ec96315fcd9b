"""Triton's python/test/unit/cuda/test_tma_descriptor.py, ported to minitriton: the host
`TensorDescriptor.from_tensor` refuses block shapes that are not powers of 2 (ValueError) and
rows that are not 16-byte aligned (AssertionError), as TMA needs.

Source: triton-lang/triton (MIT licence), the stored copy at commit
3007c4c791760ae9824343140687ee9c6b9e627e.  Host code on numpy (torch.randn as numpy's); Triton
runs these on Hopper and Blackwell only.  Not ported: `test_ragged_tma`, whose
`triton.tools.ragged_tma` builds its descriptors on 64-bit pointer wraparound.
"""
from contextlib import nullcontext

import numpy as np
import pytest

from minitriton.tools.tensor_descriptor import TensorDescriptor


@pytest.mark.parametrize("M, BLOCK_M, expect_error", [(128, 32, False), (127, 32, False), (128, 31, True)])
def test_1d_tma_descriptor_exception(M, BLOCK_M, expect_error):
    x = np.random.default_rng(0).standard_normal(M).astype(np.float32)
    # globalAddress in the tma descriptor must be aligned to 16 bytes for CU_TENSOR_MAP_INTERLEAVE_NONE.
    # https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TENSOR__MEMORY.html#group__CUDA__TENSOR__MEMORY
    assert x.__array_interface__["data"][0] % 16 == 0

    ctx = pytest.raises(ValueError, match="Shape element 0 must be a power of 2") if expect_error else nullcontext()
    with ctx:
        _ = TensorDescriptor.from_tensor(x, [BLOCK_M])


@pytest.mark.parametrize("M, BLOCK_M, expect_error_m", [(128, 32, False), (125, 33, True)])
@pytest.mark.parametrize("N, BLOCK_N, expect_error_n", [(128, 32, False), (128, 30, True), (127, 32, False)])
def test_2d_tma_descriptor_exception(M, N, BLOCK_M, BLOCK_N, expect_error_n, expect_error_m):
    A = np.random.default_rng(42).standard_normal((M, N)).astype(np.float16)
    # globalAddress in the tma descriptor must be aligned to 16 bytes for CU_TENSOR_MAP_INTERLEAVE_NONE.
    # https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TENSOR__MEMORY.html#group__CUDA__TENSOR__MEMORY
    assert A.__array_interface__["data"][0] % 16 == 0

    shape_error = expect_error_n or expect_error_m
    error_alignment = (N % 16) != 0
    expect_error = shape_error or error_alignment

    exc_type = ValueError if shape_error else AssertionError
    match = "Shape element . must be a power of 2" if shape_error else "strides must be 16-byte aligned"
    ctx = pytest.raises(exc_type, match=match) if expect_error else nullcontext()
    with ctx:
        _ = TensorDescriptor.from_tensor(A, [BLOCK_M, BLOCK_N])
