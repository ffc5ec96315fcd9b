"""Triton's python/test/unit/language/test_block_pointer.py, ported to minitriton: block copies
through `tl.make_block_ptr` with boundary checks and padding, a matmul through block pointers
moved by `tl.advance` (negative steps too), a rank-3 block pointer, a block pointer's dtype.

Source: triton-lang/triton (MIT licence), the stored copy at commit
06ae3c3924bee95b0224d53e2e68d05ed2f43c90.  Kernels unchanged; the host code is ours on numpy
(torch.randint / randn / arange / matmul as numpy's; a bool or bfloat16 array as numpy and
ml_dtypes hold them).  Parametrizations as Triton's.
"""
import ml_dtypes
import numpy as np
import pytest

import minitriton as triton                 # was: import triton
import minitriton.language as tl            # was: import triton.language as tl

from .helpers import check_type_supported   # was: from test_core import check_type_supported

HOST = {"bool": np.bool_, "int16": np.int16, "int32": np.int32, "float16": np.float16, "float32": np.float32,
        "bfloat16": ml_dtypes.bfloat16}


@triton.jit
def block_copy_kernel(a_ptr, b_ptr, N, BLOCK_SIZE: tl.constexpr, PADDING_OPTION: tl.constexpr,
                      TEST_LOWER_BOUND: tl.constexpr, TEST_UPPER_BOUND: tl.constexpr):
    pid = tl.program_id(0)
    offset = pid * BLOCK_SIZE
    if TEST_LOWER_BOUND:
        offset = -N
    elif TEST_UPPER_BOUND:
        offset = N
    # We only copy half of the data to see if the padding works
    a_block_ptr = tl.make_block_ptr(base=a_ptr, shape=(N // 2, ), strides=(1, ), offsets=(offset, ),
                                    block_shape=(BLOCK_SIZE, ), order=(0, ))
    b_block_ptr = tl.make_block_ptr(base=b_ptr, shape=(N, ), strides=(1, ), offsets=(offset, ),
                                    block_shape=(BLOCK_SIZE, ), order=(0, ))
    if PADDING_OPTION is None:
        a = tl.load(a_block_ptr, boundary_check=(0, ))
    else:
        a = tl.load(a_block_ptr, boundary_check=(0, ), padding_option=PADDING_OPTION)
    tl.store(b_block_ptr, a, boundary_check=(0, ))


@pytest.mark.parametrize("dtypes_str, n, padding_option, boundary_check", [  #
    (dtypes_str, n, padding, boundary_check)  #
    for dtypes_str in (("bool", "bool"), ("int16", "int16"), ("int32", "int32"), ("float16", "float16"),
                       ("float32", "float32"), ("bfloat16", "bfloat16"))
    for n in (64, 128, 256, 512, 1024)
    for padding in (None, "zero", "nan")  #
    for boundary_check in (None, "lower", "upper")
])
def test_block_copy(dtypes_str, n, padding_option, boundary_check, with_allocator, device):
    src_dtype_str = dtypes_str[0]
    dst_dtype_str = dtypes_str[1]
    check_type_supported(src_dtype_str, device)
    check_type_supported(dst_dtype_str, device)
    rs = np.random.RandomState(17)
    if src_dtype_str in ("bool", "int16", "int32"):
        if padding_option == "nan":
            pytest.skip("Padding with NaN is not supported for integer types")
        a = rs.randint(0, 2, (n, )).astype(HOST[src_dtype_str])
    else:
        a = rs.standard_normal((n, )).astype(HOST[src_dtype_str])
    b = np.zeros((n, ), dtype=HOST[dst_dtype_str])

    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]), )
    block_copy_kernel[grid](a_ptr=a, b_ptr=b, N=n, BLOCK_SIZE=64, PADDING_OPTION=padding_option,
                            TEST_LOWER_BOUND=boundary_check == "lower", TEST_UPPER_BOUND=boundary_check == "upper")
    if (boundary_check == "lower") or (boundary_check == "upper"):
        assert np.all(b == 0)
    else:
        assert np.all(a[0:n // 2] == b[0:n // 2])
        if padding_option == "zero":
            assert np.all(b[n // 2:n] == 0)
        elif padding_option == "nan":
            assert np.all(np.isnan(b[n // 2:n].astype(np.float32)))


@triton.jit
def matmul_no_scf_with_advance_kernel(  #
        a_ptr, b_ptr, c_ptr,  #
        M, N, K,  #
        stride_am, stride_ak,  #
        stride_bk, stride_bn,  #
        stride_cm, stride_cn,  #
        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr  #
):
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    a_block_ptr = tl.make_block_ptr(base=a_ptr, shape=(M, K), strides=(stride_am, stride_ak), offsets=(0, 0),
                                    block_shape=(BLOCK_M, BLOCK_K), order=(1, 0))
    b_block_ptr = tl.make_block_ptr(base=b_ptr, shape=(K, N), strides=(stride_bk, stride_bn), offsets=(0, 0),
                                    block_shape=(BLOCK_K, BLOCK_N), order=(1, 0))
    # Below two lines are just for testing negative offsets for the `advance` API, which could be removed
    a_block_ptr = tl.advance(a_block_ptr, (BLOCK_M, -BLOCK_K))
    a_block_ptr = tl.advance(a_block_ptr, (-BLOCK_M, BLOCK_K))
    a = tl.load(a_block_ptr, boundary_check=(1, ), padding_option="zero")
    b = tl.load(b_block_ptr, boundary_check=(0, ), padding_option="zero")

    c = tl.dot(a, b)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, c)


@pytest.mark.parametrize("shape, num_warps", [  #
    (shape, num_warps) for shape in [
        [64, 64, 16],
        [64, 64, 32],
        [64, 64, 64],
    ] for num_warps in [4, 8]
])
def test_block_ptr_matmul_no_scf(shape, num_warps, device):
    m, n, k = shape
    rs = np.random.RandomState(17)
    a = rs.standard_normal((m, k)).astype(np.float16)
    b = rs.standard_normal((k, n)).astype(np.float16)
    c = np.empty((m, n), dtype=np.float32)

    grid = lambda META: (1, )
    matmul_no_scf_with_advance_kernel[grid](
        a_ptr=a, b_ptr=b, c_ptr=c,  #
        M=m, N=n, K=k,  #
        stride_am=a.strides[0] // a.itemsize, stride_ak=a.strides[1] // a.itemsize,  #
        stride_bk=b.strides[0] // b.itemsize, stride_bn=b.strides[1] // b.itemsize,  #
        stride_cm=c.strides[0] // c.itemsize, stride_cn=c.strides[1] // c.itemsize,  #
        BLOCK_M=m, BLOCK_N=n, BLOCK_K=k,  #
        num_warps=num_warps)
    # torch.matmul of fp16 gives fp16 (summed in fp32), and assert_close of fp32 against fp16 uses fp16's tolerances
    golden = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(c, golden.astype(np.float32), rtol=1e-3, atol=1e-5)


@triton.jit
def block_copy_3d_kernel(src_ptr, dst_ptr, dim0, dim1, dim2, stride0, stride1, stride2, BLOCK0: tl.constexpr,
                         BLOCK1: tl.constexpr, BLOCK2: tl.constexpr):
    src_block_ptr = tl.make_block_ptr(base=src_ptr, shape=(dim0, dim1, dim2), strides=(stride0, stride1, stride2),
                                      offsets=(dim0 - 1, 0, dim2 - 2), block_shape=(BLOCK0, BLOCK1, BLOCK2),
                                      order=(2, 1, 0))
    dst_block_ptr = tl.make_block_ptr(base=dst_ptr, shape=(dim0, dim1, dim2), strides=(stride0, stride1, stride2),
                                      offsets=(dim0 - 1, 0, dim2 - 2), block_shape=(BLOCK0, BLOCK1, BLOCK2),
                                      order=(2, 1, 0))
    values = tl.load(src_block_ptr, boundary_check=(0, 2), padding_option="zero")
    tl.store(dst_block_ptr, values, boundary_check=(0, 2))


def test_block_ptr_rank_3(device):
    src = np.arange(3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)
    dst = np.zeros_like(src)
    strides = [s // src.itemsize for s in src.strides]

    block_copy_3d_kernel[(1, )](src, dst, src.shape[0], src.shape[1], src.shape[2], strides[0], strides[1],
                                strides[2], BLOCK0=2, BLOCK1=4, BLOCK2=4)

    expected = np.zeros_like(src)
    expected[2:3, 0:4, 3:5] = src[2:3, 0:4, 3:5]
    np.testing.assert_array_equal(dst, expected)


@triton.jit
def block_ptr_dtype_kernel(src_ptr, dst_ptr, N, BLOCK_SIZE: tl.constexpr):
    block_ptr = tl.make_block_ptr(base=src_ptr, shape=(N, ), strides=(1, ), offsets=(0, ), block_shape=(BLOCK_SIZE, ),
                                  order=(0, ))
    values = tl.load(block_ptr, boundary_check=(0, ), padding_option="zero").to(block_ptr.dtype.element_ty)
    tl.store(dst_ptr + tl.arange(0, BLOCK_SIZE), values)


def test_block_ptr_dtype_element_ty(with_allocator, device):
    src = np.arange(16, dtype=np.float16)
    dst = np.zeros_like(src)

    block_ptr_dtype_kernel[(1, )](src, dst, src.size, BLOCK_SIZE=16)

    np.testing.assert_array_equal(dst, src)
