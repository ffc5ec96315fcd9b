"""Triton's python/test/unit/cuda/test_experimental_tma.py, ported to minitriton: the TMA
descriptors of Triton 3.1-3.3, made on the host and passed by value (`create_1d_tma_descriptor`,
`create_2d_tma_descriptor`) or in memory (the driver's `fill_1d/2d_tma_descriptor` into an
array), or written by one program of the kernel (`experimental_device_tensormap_create1d/2d`)
while the others spin on a flag; loads and stores through them (`_experimental_descriptor_load`
/ `_experimental_descriptor_store`), a matmul on them, and descriptors made in the kernel
(`_experimental_make_tensor_descriptor`, `tl._experimental_tensor_descriptor`) loaded, stored and
carried through loops.

Source: triton-lang/triton (MIT licence), the stored copy at commit
0d68adb03e1a82e9f5f0a388445193df85b5f8d3.  Kernels unchanged; host code ours on numpy
(`x.data_ptr()` is `triton.data_ptr(x)`; a descriptor's bytes live in a numpy array, which is
the device's memory here).  Triton runs these on Hopper and later only (its interpreter runs the
`_experimental_make_tensor_descriptor` ones); the asserts on PTX are Triton's compiler's alone.
Matrix sizes are reduced (Triton: 8192 x 8192 x 1024 off the interpreter, the block sizes on
it).  `out` in the device-tensormap tests is drawn from another seed than `inp` (Triton draws both
from the same one, so the copy could not be seen).  Not ported: the tests of `_experimental_make_tensor_descriptor` that repeat
test_tensor_descriptor.py's under the newer name (3-d, n-d, in functions, batched, gathers,
scatters, the MX formats).
"""
import numpy as np
import pytest

import minitriton as triton                 # was: import triton
import minitriton.language as tl            # was: import triton.language as tl
from minitriton.tools.experimental_descriptor import create_1d_tma_descriptor, create_2d_tma_descriptor

from .helpers import dtypes_with_bfloat16, numpy_random, to_triton


def create_tma_desc_gmem_ptr(ptr, dims, block_dims, element_size):
    cpu_desc = np.empty(128, np.int8)           # was: torch.empty(128, device="cpu"), copied to the GPU
    if len(dims) == 1:
        triton.runtime.driver.active.utils.fill_1d_tma_descriptor(ptr, dims[0], block_dims[0], element_size,
                                                                  triton.data_ptr(cpu_desc))
    else:
        triton.runtime.driver.active.utils.fill_2d_tma_descriptor(ptr, dims[0], dims[1], block_dims[0], block_dims[1],
                                                                  element_size, triton.data_ptr(cpu_desc))
    return cpu_desc


tma_dtypes = sorted(set(dtypes_with_bfloat16) - {"int64", "uint64", "float64"})


@pytest.mark.parametrize("byval_tma", [True, False])
def test_experimetal_descriptor_load(byval_tma):
    SIZE = 128

    @triton.jit
    def kernel(Z, desc, SIZE: tl.constexpr, BYVAL_TMA: tl.constexpr):
        if not BYVAL_TMA:
            tl.extra.cuda.experimental_tensormap_fenceproxy_acquire(desc)
        off_desc = 0
        off = tl.arange(0, SIZE)
        x = tl._experimental_descriptor_load(desc, [off_desc], [SIZE], Z.dtype.element_ty)
        tl.store(Z + off, x)

    x = np.random.default_rng(0).standard_normal(SIZE).astype(np.float32)
    if byval_tma:
        desc = create_1d_tma_descriptor(triton.data_ptr(x), SIZE, SIZE, x.itemsize)
    else:
        desc = create_tma_desc_gmem_ptr(triton.data_ptr(x), [SIZE], [SIZE], x.itemsize)
    z_tri = np.empty_like(x)
    kernel[(1, )](z_tri, desc, SIZE=SIZE, BYVAL_TMA=byval_tma, num_warps=4)
    np.testing.assert_array_equal(x, z_tri)


@triton.jit
def matmul_kernel_tma(a_desc_ptr, b_desc_ptr, c_desc_ptr,  #
                      M, N, K, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                      BYVAL_TMA: tl.constexpr, dtype: tl.constexpr):
    if not BYVAL_TMA:
        tl.extra.cuda.experimental_tensormap_fenceproxy_acquire(a_desc_ptr)
        tl.extra.cuda.experimental_tensormap_fenceproxy_acquire(b_desc_ptr)
        tl.extra.cuda.experimental_tensormap_fenceproxy_acquire(c_desc_ptr)

    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    pid_m = pid % num_pid_m
    pid_n = pid // num_pid_m
    offs_am = pid_m * BLOCK_SIZE_M
    offs_bn = pid_n * BLOCK_SIZE_N
    offs_k = 0
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl._experimental_descriptor_load(a_desc_ptr, [offs_am, offs_k], [BLOCK_SIZE_M, BLOCK_SIZE_K], dtype)
        b = tl._experimental_descriptor_load(b_desc_ptr, [offs_k, offs_bn], [BLOCK_SIZE_K, BLOCK_SIZE_N], dtype)
        accumulator = tl.dot(a, b, acc=accumulator)
        offs_k += BLOCK_SIZE_K
    accumulator = accumulator.to(dtype)
    tl._experimental_descriptor_store(c_desc_ptr, accumulator, [offs_am, offs_bn])


@pytest.mark.parametrize("num_stages", [1, 4])
@pytest.mark.parametrize("BLOCK_M, BLOCK_N, BLOCK_K", [(32, 32, 32), (128, 64, 64), (128, 128, 64), (128, 256, 64)])
@pytest.mark.parametrize("byval_tma", [True, False])
def test_experimental_tma_matmul(num_stages, BLOCK_M, BLOCK_N, BLOCK_K, byval_tma):
    M, N, K = 256, 512, 128                     # Triton: 8192, 8192, 1024
    rng = np.random.default_rng(42)
    A = rng.standard_normal((M, K)).astype(np.float16)
    B = rng.standard_normal((K, N)).astype(np.float16)
    C = np.empty((M, N), dtype=np.float16)
    if byval_tma:
        desc_a = create_2d_tma_descriptor(triton.data_ptr(A), M, K, BLOCK_M, BLOCK_K, A.itemsize)
        desc_b = create_2d_tma_descriptor(triton.data_ptr(B), K, N, BLOCK_K, BLOCK_N, B.itemsize)
        desc_c = create_2d_tma_descriptor(triton.data_ptr(C), M, N, BLOCK_M, BLOCK_N, C.itemsize)
    else:
        desc_a = create_tma_desc_gmem_ptr(triton.data_ptr(A), [M, K], [BLOCK_M, BLOCK_K], A.itemsize)
        desc_b = create_tma_desc_gmem_ptr(triton.data_ptr(B), [K, N], [BLOCK_K, BLOCK_N], B.itemsize)
        desc_c = create_tma_desc_gmem_ptr(triton.data_ptr(C), [M, N], [BLOCK_M, BLOCK_N], C.itemsize)
    matmul_kernel_tma[(triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N), 1,
                       1)](desc_a, desc_b, desc_c, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, BYVAL_TMA=byval_tma,
                           num_warps=8, num_stages=num_stages, dtype=tl.float16)
    ref_out = (A.astype(np.float32) @ B.astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(ref_out.astype(np.float32), C.astype(np.float32), rtol=1e-3, atol=1e-3)


@triton.jit
def device_tensormap_kernel2d(in_ptr, out_ptr, in_desc, out_desc, ready_flag, M, N, M_BLOCK: tl.constexpr,
                              N_BLOCK: tl.constexpr):
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)

    if pid_m == 0 and pid_n == 0:
        # Write out descriptor
        tl.extra.cuda.experimental_device_tensormap_create2d(
            desc_ptr=in_desc,
            global_address=in_ptr,
            load_size=[M_BLOCK, N_BLOCK],
            global_size=[M, N],
            element_ty=in_ptr.dtype.element_ty,
        )
        tl.extra.cuda.experimental_device_tensormap_create2d(
            desc_ptr=out_desc,
            global_address=out_ptr,
            load_size=[M_BLOCK, N_BLOCK],
            global_size=[M, N],
            element_ty=out_ptr.dtype.element_ty,
        )
        tl.atomic_xchg(ready_flag, 1, sem="release")
    else:
        # Spin until descriptor is ready
        flag = tl.full([], 0, tl.int32)
        while flag == 0:
            flag = tl.atomic_add(ready_flag, 0, sem="acquire")
        tl.extra.cuda.experimental_tensormap_fenceproxy_acquire(in_desc)
        tl.extra.cuda.experimental_tensormap_fenceproxy_acquire(out_desc)

    moffset = pid_m * M_BLOCK
    noffset = pid_n * N_BLOCK

    x = tl._experimental_descriptor_load(in_desc, [moffset, noffset], [M_BLOCK, N_BLOCK], in_ptr.dtype.element_ty)
    tl._experimental_descriptor_store(out_desc, x, [moffset, noffset])


@pytest.mark.parametrize("dtype_str", tma_dtypes)
def test_device_tensormap2d(dtype_str):
    M_BLOCK, N_BLOCK = 32, 64
    M_GRID, N_GRID = 2, 4

    shape = (M_BLOCK * M_GRID, M_BLOCK * N_GRID)
    inp = to_triton(numpy_random(shape, dtype_str=dtype_str), dst_type=dtype_str)
    inp_copy = inp.copy()
    out = to_triton(numpy_random(shape, dtype_str=dtype_str, rs=np.random.RandomState(7)), dst_type=dtype_str)

    rng = np.random.default_rng(0)
    in_desc = rng.integers(0, 256, size=(128, ), dtype=np.uint8)
    out_desc = rng.integers(0, 256, size=(128, ), dtype=np.uint8)
    ready_flag = np.zeros((), dtype=np.int32)

    device_tensormap_kernel2d[M_GRID, N_GRID](inp, out, in_desc, out_desc, ready_flag, *shape, M_BLOCK=M_BLOCK,
                                              N_BLOCK=N_BLOCK)

    # Check results are correct
    np.testing.assert_array_equal(inp, out)
    np.testing.assert_array_equal(inp, inp_copy)


@triton.jit
def device_tensormap_kernel1d(in_ptr, out_ptr, in_desc, out_desc, ready_flag, numel, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)

    if pid == 0:
        # Write out descriptor
        tl.extra.cuda.experimental_device_tensormap_create1d(
            desc_ptr=in_desc,
            global_address=in_ptr,
            load_size=BLOCK,
            global_size=numel,
            element_ty=in_ptr.dtype.element_ty,
        )
        tl.extra.cuda.experimental_device_tensormap_create1d(
            desc_ptr=out_desc,
            global_address=out_ptr,
            load_size=BLOCK,
            global_size=numel,
            element_ty=out_ptr.dtype.element_ty,
        )
        tl.atomic_xchg(ready_flag, 1, sem="release")
    else:
        # Spin until descriptor is ready
        flag = tl.full([], 0, tl.int32)
        while flag == 0:
            flag = tl.atomic_add(ready_flag, 0, sem="acquire")
        tl.extra.cuda.experimental_tensormap_fenceproxy_acquire(in_desc)
        tl.extra.cuda.experimental_tensormap_fenceproxy_acquire(out_desc)

    offset = pid * BLOCK

    x = tl._experimental_descriptor_load(in_desc, [offset], [BLOCK], in_ptr.dtype.element_ty)
    tl._experimental_descriptor_store(out_desc, x, [offset])


@pytest.mark.parametrize("dtype_str", tma_dtypes)
def test_device_tensormap1d(dtype_str):
    BLOCK = 256
    GRID = 8

    shape = (BLOCK * GRID, )
    inp = to_triton(numpy_random(shape, dtype_str=dtype_str), dst_type=dtype_str)
    inp_copy = inp.copy()
    out = to_triton(numpy_random(shape, dtype_str=dtype_str, rs=np.random.RandomState(7)), dst_type=dtype_str)
    out_before = out.copy()

    rng = np.random.default_rng(0)
    in_desc = rng.integers(0, 256, size=(128, ), dtype=np.uint8)
    out_desc = rng.integers(0, 256, size=(128, ), dtype=np.uint8)
    ready_flag = np.zeros((), dtype=np.int32)

    device_tensormap_kernel1d[
        1,
    ](inp, out, in_desc, out_desc, ready_flag, *shape, BLOCK=BLOCK)

    # Check results are correct (Triton compares the whole arrays, which its equal draws made
    # equal already; the one-program grid copies the first block and leaves the rest)
    np.testing.assert_array_equal(inp[:BLOCK], out[:BLOCK])
    np.testing.assert_array_equal(out_before[BLOCK:], out[BLOCK:])
    np.testing.assert_array_equal(inp, inp_copy)


@pytest.mark.parametrize("dtype_str", tma_dtypes)
def test_tensor_descriptor_load(dtype_str):

    @triton.jit
    def kernel(out_ptr, a_ptr, M, N, M_BLOCK: tl.constexpr, N_BLOCK: tl.constexpr):
        desc = tl._experimental_make_tensor_descriptor(
            a_ptr,
            shape=[M, N],
            strides=[N, 1],
            block_shape=[M_BLOCK, N_BLOCK],
        )

        assert desc.shape[0] == M
        assert desc.shape[1] == N
        assert desc.strides[0] == N
        assert desc.strides[1] == 1
        assert desc.block_shape == [M_BLOCK, N_BLOCK]
        block = desc.load([M_BLOCK, 2 * N_BLOCK])
        idx = tl.arange(0, M_BLOCK)[:, None] * N_BLOCK + tl.arange(0, N_BLOCK)[None, :]
        tl.store(out_ptr + idx, block)

    M, N = 32, 128
    inp = to_triton(numpy_random((M, N), dtype_str), dst_type=dtype_str)

    M_BLOCK = 8
    N_BLOCK = 32
    out = np.empty((M_BLOCK, N_BLOCK), inp.dtype)

    kernel[(1, )](out, inp, M, N, M_BLOCK, N_BLOCK)

    expect = inp[1 * M_BLOCK:2 * M_BLOCK, 2 * N_BLOCK:3 * N_BLOCK]
    np.testing.assert_array_equal(expect, out)


@pytest.mark.parametrize("dtype_str", tma_dtypes)
def test_tensor_descriptor_store(dtype_str):

    @triton.jit
    def kernel(out_ptr, a_ptr, M, N, M_BLOCK: tl.constexpr, N_BLOCK: tl.constexpr):
        moffset = tl.program_id(0) * M_BLOCK
        noffset = tl.program_id(1) * N_BLOCK

        midx = moffset + tl.arange(0, M_BLOCK)[:, None]
        nidx = noffset + tl.arange(0, N_BLOCK)[None, :]
        idx = midx * N + nidx

        val = tl.load(a_ptr + idx)

        desc = tl._experimental_make_tensor_descriptor(
            out_ptr,
            shape=[M, N],
            strides=[N, 1],
            block_shape=[M_BLOCK, N_BLOCK],
        )

        assert desc.shape[0] == M
        assert desc.shape[1] == N
        assert desc.strides[0] == N
        assert desc.strides[1] == 1
        assert desc.block_shape == [M_BLOCK, N_BLOCK]
        desc.store([moffset, noffset], val)

    M, N = 32, 128
    inp = to_triton(numpy_random((M, N), dtype_str), dst_type=dtype_str)

    M_BLOCK = 8
    N_BLOCK = 32
    out = np.empty((M, N), inp.dtype)

    grid_m = M // M_BLOCK
    grid_n = N // N_BLOCK

    kernel[(grid_m, grid_n)](out, inp, M, N, M_BLOCK, N_BLOCK)

    np.testing.assert_array_equal(inp, out)


@triton.jit
def kernel_make_tensor_desciptor_loop_carried(a_ptr, M, N, MBLOCK: tl.constexpr, NBLOCK: tl.constexpr):
    # Test that descriptors work with
    pid = tl.program_id(0)
    moffset = MBLOCK * pid

    a_desc = tl._experimental_make_tensor_descriptor(
        a_ptr,
        shape=[M, N],
        strides=[N, 1],
        block_shape=[MBLOCK, NBLOCK],
    )

    for i in range(0, N, NBLOCK):
        assert isinstance(a_desc, tl._experimental_tensor_descriptor)
        if i % (3 * NBLOCK) == 0:
            a_desc = tl._experimental_make_tensor_descriptor(
                a_ptr,
                shape=[M, N],
                strides=[N, 1],
                block_shape=[MBLOCK, NBLOCK],
            )
            assert isinstance(a_desc, tl._experimental_tensor_descriptor)
        assert isinstance(a_desc, tl._experimental_tensor_descriptor)
        a = a_desc.load([moffset, i])
        a_desc.store([moffset, i], a + 10)

    n = 0
    while n < N:
        assert isinstance(a_desc, tl._experimental_tensor_descriptor)
        if n % (3 * NBLOCK) == 0:
            assert isinstance(a_desc, tl._experimental_tensor_descriptor)
            a_desc = tl._experimental_make_tensor_descriptor(
                a_ptr,
                shape=[M, N],
                strides=[N, 1],
                block_shape=[MBLOCK, NBLOCK],
            )
        assert isinstance(a_desc, tl._experimental_tensor_descriptor)
        a = a_desc.load([moffset, n])
        a_desc.store([moffset, n], a + 5)

        n += NBLOCK


def test_experimental_make_tensor_descriptor_loop_carried():
    M, N = 64, 512
    A = np.random.default_rng(42).standard_normal((M, N)).astype(np.float32)
    MBLOCK, NBLOCK = 8, 128
    grid = (triton.cdiv(M, MBLOCK), )

    ref_out = A + 15
    kernel_make_tensor_desciptor_loop_carried[grid](
        A,
        M,
        N,
        MBLOCK,
        NBLOCK,
    )
    np.testing.assert_allclose(ref_out, A, rtol=1.3e-6, atol=1e-5)
