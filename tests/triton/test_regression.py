"""Triton's python/test/regression/, ported to minitriton: kernels that once broke Triton's
compiler (issue numbers in the tests), checked for their numbers.

Sources: triton-lang/triton (MIT licence), the stored copies of `test_functional_regressions.py`
at 126798538fd929473a5ba92b85332d9d36bd71ea, `test_cast_matmul.py` at
09a7ded0b7a6c1bfb83cf451d702fd8e9d55ed2d, `test_dedup_mma.py` at
4d5500f68255cf92d4947d91c9abc74c8ef4e227, `test_tensormap_predication.py` at
1944f8c80debf1099c34b2507c7d62e45fb77315 and the kernel of `repro_mmav5_tmem_stale_d.py` at
7fcdfd39369cd5fc2cacdfb416932db5da63c3f7.  Kernels unchanged; host code ours on numpy (torch's
`randint`, `randn` and `matmul` become numpy's).  Reduced: test_cast_matmul runs every pair of
input types at one block shape and every block shape at two pairs, at 128 x 96 x 160 (Triton:
768 x 768 x 1024, a multiple of every block; here N is not, so the `% N` wrap and the store mask
are exercised).  The tensor-map tests Triton runs on Hopper and newer only run here.
"""
import ml_dtypes
import numpy as np
import pytest

import minitriton as triton                 # was: import triton
import minitriton.language as tl            # was: import triton.language as tl


# ---------------------------------------------------------------- test_functional_regressions.py
def test_chained_matmul(device):
    # Regression test for issue #1601
    def chained_matmul_reference(a, b, c):
        intermediate = np.einsum('MK,NK->MN', a.astype(np.float32), b.astype(np.float32))
        return np.einsum('MN,NK->MK', intermediate, c.astype(np.float32)).astype(a.dtype)

    @triton.jit
    def chained_matmul_kernel(A,  # shape: (m, k)
                              B,  # shape: (n, k)
                              C,  # shape: (n, k)
                              out,  # shape: (m, k)
                              m, n, k: tl.constexpr,  #
                              block_m: tl.constexpr, block_n: tl.constexpr, block_k: tl.constexpr):

        tl.static_assert(block_k == k, f"expected block_k == k but got {block_k} != {k}")

        block_ix = tl.program_id(0)
        a_tile = (block_ix * block_m + tl.arange(0, block_m))[:, None] * block_k \
            + tl.arange(0, block_k)[None, :]

        a = tl.load(A + a_tile, mask=a_tile < m * k, other=0.0)

        acc = tl.zeros([block_m, block_k], dtype=tl.float32)

        for loop_block_start in range(0, n, block_n):
            bc_tile = (loop_block_start + tl.arange(0, block_n))[:, None] * block_k \
                + tl.arange(0, block_k)[None, :]
            b = tl.load(B + bc_tile, mask=bc_tile < n * k, other=0.0)

            intermediate = tl.dot(a, tl.trans(b))
            intermediate_mask = ((loop_block_start + tl.arange(0, block_n)) < n)[None, :] \
                * (tl.arange(0, block_m) < m)[:, None]

            intermediate = tl.where(intermediate_mask, intermediate, 0.0)

            c = tl.load(C + bc_tile, mask=bc_tile < n * k)

            acc += tl.dot(intermediate.to(A.dtype.element_ty), c)

        tl.store(out + a_tile, acc.to(A.dtype.element_ty), mask=a_tile < m * k)

    m, n, k = 32, 64, 128
    block_m, block_n, block_k = 16, 32, k

    grid = (triton.cdiv(m, block_m), )
    rs = np.random.RandomState(0)
    a = rs.randint(0, 2, (m, k)).astype(np.float16)
    b = rs.randint(0, 2, (n, k)).astype(np.float16)
    c = rs.randint(0, 2, (n, k)).astype(np.float16)
    triton_result = np.zeros_like(a)

    torch_result = chained_matmul_reference(a, b, c)
    chained_matmul_kernel[grid](
        a, b, c, triton_result, m, n, k,  #
        block_m=block_m, block_n=block_n, block_k=block_k)

    assert (torch_result == triton_result).all()


def test_vecmat(device):

    @triton.jit
    def batched_vecmat(
            # inputs
            A,  # shape: [dim_m, dim_k]
            B,  # shape: [dim_m, dim_n, dim_k]
            # dimensions
        dim_m, dim_n, dim_k,
            # outputs
            output,
            # block information
            block_m: tl.constexpr, block_n: tl.constexpr, block_k: tl.constexpr):
        m_index = tl.program_id(0)
        n_index = tl.program_id(1)
        # Output tile
        output_tile = (m_index * block_m + tl.arange(0, block_m))[:, None] * dim_n \
            + (n_index * block_n + tl.arange(0, block_n))[None, :]

        vecmat = tl.zeros([block_m, block_n], dtype=A.dtype.element_ty)
        k_blocks = dim_k // block_k
        for k_index in range(k_blocks):
            # Load A tile
            a_tile = (m_index * block_m + tl.arange(0, block_m))[:, None] * dim_k \
                + (k_index * block_k + tl.arange(0, block_k))[None, :]
            a = tl.load(A + a_tile)

            # Load B tile, transposed to [n, m, k] in order to broadcast A on a
            # leading dimension.
            b_tile = (m_index * block_m + tl.arange(0, block_m))[None, :, None] * dim_n * dim_k \
                + (n_index * block_n + tl.arange(0, block_n))[:, None, None] * dim_k \
                + (k_index * block_k + tl.arange(0, block_k))[None, None, :]
            b = tl.load(B + b_tile)

            expanded_a, _ = tl.broadcast(a, b)
            vecmat += tl.trans(tl.sum(expanded_a * b, axis=2))

        tl.store(output + output_tile, vecmat)

    M, N, K = 128, 128, 128
    block_m, block_n, block_k = 16, 32, 64

    rs = np.random.RandomState(17)
    A_vec = rs.randint(0, 4, (M, K)).astype('float32')
    B_vec = rs.randint(0, 4, (M, N, K)).astype('float32')
    A = A_vec
    B = B_vec

    A_tri = A.copy()
    B_tri = B.copy()
    C_tri = np.zeros((M, N), dtype=np.float32)

    grid = (M // block_m, N // block_n)

    batched_vecmat[grid](
        A_tri, B_tri, M, N, K, C_tri,  #
        block_m=block_m, block_n=block_n, block_k=block_k,  #
        num_warps=4, num_stages=1)

    A_expanded = A[:, np.newaxis, :]
    A_broadcasted = np.broadcast_to(A_expanded, (M, N, K))
    AB = A_broadcasted * B
    C_ref = np.sum(AB, axis=2)

    np.testing.assert_allclose(C_ref, C_tri, rtol=0.01, atol=1e-3)


@pytest.mark.parametrize("type",
                         ["pre_load", "post_load", "post_pre_mixed", "post_load_two_iters", "post_load_three_iters"])
def test_iv_dependent_matmul(type, device):

    @triton.jit
    def kernel(a_ptr, b_ptr, c_ptr,  #
               M, N, K,  #
               stride_am, stride_ak,  #
               stride_bk, stride_bn,  #
               stride_cm, stride_cn,  #
               BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,  #
               type: tl.constexpr):
        pid = tl.program_id(axis=0)
        num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
        pid_m = pid // num_pid_n
        pid_n = pid % num_pid_n

        offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
        offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
        offs_k = tl.arange(0, BLOCK_SIZE_K)
        a_ptr = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
        b_ptr = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
        a_ptrs = a_ptr
        b_ptrs = b_ptr
        if type == "post_load_two_iters":
            a_ptrs_next = a_ptr + BLOCK_SIZE_K * stride_ak
            b_ptrs_next = b_ptr + BLOCK_SIZE_K * stride_bk
        elif type == "post_load_three_iters":
            a_ptrs_next = a_ptr + BLOCK_SIZE_K * stride_ak
            b_ptrs_next = b_ptr + BLOCK_SIZE_K * stride_bk
            a_ptrs_next_next = a_ptr + 2 * BLOCK_SIZE_K * stride_ak
            b_ptrs_next_next = b_ptr + 2 * BLOCK_SIZE_K * stride_bk

        accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
            if type == "pre_load":
                a_ptrs = a_ptr + k * BLOCK_SIZE_K * stride_ak
                b_ptrs = b_ptr + k * BLOCK_SIZE_K * stride_bk
            elif type == "post_pre_mixed":
                a_ptrs = a_ptr + k * BLOCK_SIZE_K * stride_ak
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
            accumulator += tl.dot(a, b)
            if type == "post_load":
                a_ptrs = a_ptr + (k + 1) * BLOCK_SIZE_K * stride_ak
                b_ptrs = b_ptr + (k + 1) * BLOCK_SIZE_K * stride_bk
            elif type == "post_pre_mixed":
                b_ptrs = b_ptr + (k + 1) * BLOCK_SIZE_K * stride_bk
            elif type == "post_load_two_iters":
                a_ptrs = a_ptrs_next
                b_ptrs = b_ptrs_next
                a_ptrs_next = a_ptr + (k + 2) * BLOCK_SIZE_K * stride_ak
                b_ptrs_next = b_ptr + (k + 2) * BLOCK_SIZE_K * stride_bk
            elif type == "post_load_three_iters":
                a_ptrs = a_ptrs_next
                b_ptrs = b_ptrs_next
                a_ptrs_next = a_ptrs_next_next
                b_ptrs_next = b_ptrs_next_next
                a_ptrs_next_next = a_ptr + (k + 3) * BLOCK_SIZE_K * stride_ak
                b_ptrs_next_next = b_ptr + (k + 3) * BLOCK_SIZE_K * stride_bk
        c = accumulator.to(tl.float16)

        offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
        offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
        c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
        c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
        tl.store(c_ptrs, c, mask=c_mask)

    M = 256
    K = 256
    N = 256
    BLOCK_SIZE_K = 32
    BLOCK_SIZE_N = 32
    BLOCK_SIZE_M = 32

    rs = np.random.RandomState(0)
    a = rs.rand(M, K).astype(np.float32)
    b = rs.rand(K, N).astype(np.float32)

    torch_output = a @ b
    triton_output = np.empty_like(torch_output)

    def grid(META):
        return (triton.cdiv(M, META['BLOCK_SIZE_M']) * triton.cdiv(N, META['BLOCK_SIZE_N']), )

    num_stages = 4 if type == "post_load_three_iters" else 3
    kernel[grid](
        a, b, triton_output, M, N, K,  #
        a.strides[0] // 4, a.strides[1] // 4, b.strides[0] // 4, b.strides[1] // 4,  #
        triton_output.strides[0] // 4, triton_output.strides[1] // 4,  #
        BLOCK_SIZE_M=BLOCK_SIZE_M, BLOCK_SIZE_N=BLOCK_SIZE_N, BLOCK_SIZE_K=BLOCK_SIZE_K, type=type,  #
        num_stages=num_stages)
    # the fp16 result stored in a float32 array, as in Triton's test
    np.testing.assert_allclose(triton_output, torch_output, rtol=1e-2, atol=1e-2)


def test_reverse_range(device):

    @triton.jit
    def kernel(in_ptr, out_ptr):
        x0 = tl.arange(0, 512)
        tmp0 = tl.load(in_ptr + (512 - x0))
        tl.store(out_ptr + x0, tmp0)

    data = np.random.RandomState(0).randn(516).astype(np.float32)
    res = np.empty((512, ), dtype=np.float32)
    kernel[(1, )](data, res)
    ref = np.flip(data[1:513], 0)
    assert (res == ref).all()


@triton.jit
def _triton_cummax_helper_fn(arg0_0, arg0_1, arg1_0, arg1_1):
    tmp0 = arg0_0 > arg1_0
    tmp1 = arg0_0 == arg1_0
    tmp2 = arg0_1 > arg1_1
    tmp3 = tmp1 & tmp2
    tmp4 = tmp0 | tmp3
    tmp5 = tl.where(tmp4, arg0_0, arg1_0)
    tmp6 = tl.where(tmp4, arg0_1, arg1_1)
    return tmp5, tmp6


def test_inductor_cummax_bool(device):

    @triton.jit
    def triton_(in_ptr0, out_ptr0, out_ptr1, XBLOCK: tl.constexpr):
        offset = tl.arange(0, XBLOCK)
        tmp0 = tl.load(in_ptr0 + offset).to(tl.int1)
        tmp1 = tmp0.to(tl.int1)
        tmp3 = offset.to(tl.int64)
        tmp5, tmp6, = tl.associative_scan((
            tmp1,
            tmp3,
        ), 0, _triton_cummax_helper_fn)
        tl.store(out_ptr0 + offset, tmp5)
        tl.store(out_ptr1 + offset, tmp6)

    a = np.random.RandomState(0).randn(64) > 0
    values = np.empty((64, ), dtype=bool)
    indices = np.empty((64, ), dtype=np.int64)
    # torch.cummax: the running maximum and the last index where it was reached
    ref_values = np.maximum.accumulate(a)
    ref_indices = np.array([max(j for j in range(i + 1) if a[j] == ref_values[i]) for i in range(64)])

    triton_[(1, )](a, values, indices, 64)
    np.testing.assert_array_equal(ref_values, values)
    np.testing.assert_array_equal(ref_indices, indices)


def test_permutation_ptxas_bug(device):

    @triton.jit
    def _matmul(
        X,
        W,
        Out,
        M: tl.constexpr,
        N: tl.constexpr,
        K: tl.constexpr,
        stride_xm,
        stride_wn,
        stride_ym,
    ):
        BLOCK_M: tl.constexpr = 16
        BLOCK_N: tl.constexpr = 8
        BLOCK_K: tl.constexpr = 32

        offs_m = tl.arange(0, BLOCK_M)
        offs_n = tl.arange(0, BLOCK_N)
        offs_k = tl.arange(0, BLOCK_K)

        mask_m = offs_m < M
        mask_n = offs_n < N
        mask_k = offs_k < K

        XPtrs = X + offs_m[:, None] * stride_xm + offs_k[None, :]

        # column major
        WPtrs = W + offs_k[:, None] + offs_n[None, :] * stride_wn

        x = tl.load(XPtrs, mask=(mask_m[:, None] & mask_k[None, :]), other=0.0)
        w = tl.load(WPtrs, mask=(mask_k[:, None] & mask_n[None, :]), other=0.0)
        out = tl.dot(x, w)

        YPtrs = Out + offs_m[:, None] * stride_ym + offs_n[None, :]
        tl.store(YPtrs, out, mask=(mask_m[:, None] & mask_n[None, :]))

    M, N, K = 8, 8, 8
    dtype = ml_dtypes.float8_e5m2
    rs = np.random.RandomState(0)

    X = rs.randn(M, K).astype(np.float32).astype(dtype)
    W = rs.randn(N, K).astype(np.float32).astype(dtype).T
    Out = np.zeros((M, N), dtype=dtype)

    _matmul[(1, )](
        X,
        W,
        Out,
        M,
        N,
        K,
        X.strides[0],
        W.strides[1],
        Out.strides[0],
        num_warps=1,
    )
    ref = (X.astype(np.float32) @ W.astype(np.float32)).astype(dtype)
    np.testing.assert_array_equal(Out.astype(np.float32), ref.astype(np.float32))


# ---------------------------------------------------------------- test_cast_matmul.py
# Mixed precision tests for matmul (tl.dot) with cast (tl.to), issue #2523; the input types a
# CUDA device of compute capability 8.9 or newer runs (ml_dtypes holds the fp8 ones on the host)
input_dtypes = ["bfloat16", "float16", "float32", "int8", "float8_e5m2", "float8_e4m3fn"]
out_dtypes = ["float16", "float32"]
_HOST = {"bfloat16": ml_dtypes.bfloat16, "float16": np.float16, "float32": np.float32, "int8": np.int8,
         "float8_e5m2": ml_dtypes.float8_e5m2, "float8_e4m3fn": ml_dtypes.float8_e4m3fn}


@triton.jit
def matmul_kernel(A, B, C, M, N, K,  #
                  stride_am, stride_ak,  #
                  stride_bk, stride_bn,  #
                  stride_cm, stride_cn,  #
                  compute_dtype: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,  #
                  BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # matrix multiplication
    pid = tl.program_id(0)
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(N, BLOCK_N)
    # re-order program ID for better L2 performance
    width = GROUP_M * grid_n
    group_id = pid // width
    group_size = min(grid_m - group_id * GROUP_M, GROUP_M)
    pid_m = group_id * GROUP_M + (pid % group_size)
    pid_n = (pid % width) // (group_size)
    # do matrix multiplication
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ram = tl.max_contiguous(tl.multiple_of(rm % M, BLOCK_M), BLOCK_M)
    rbn = tl.max_contiguous(tl.multiple_of(rn % N, BLOCK_N), BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    # pointers
    A = A + (ram[:, None] * stride_am + rk[None, :] * stride_ak)
    B = B + (rk[:, None] * stride_bk + rbn[None, :] * stride_bn)
    acc_dtype = tl.float16 if compute_dtype == tl.float16 and C.dtype.element_ty == tl.float16 else tl.float32
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=acc_dtype)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_remaining = K - k * BLOCK_K
        _0 = tl.zeros((1, 1), dtype=compute_dtype)
        a = tl.load(A, mask=rk[None, :] < k_remaining, other=_0)
        b = tl.load(B, mask=rk[:, None] < k_remaining, other=_0)
        acc += tl.dot(a.to(compute_dtype), b.to(compute_dtype), out_dtype=acc_dtype)
        A += BLOCK_K * stride_ak
        B += BLOCK_K * stride_bk
    acc = acc.to(C.dtype.element_ty)
    # rematerialize rm and rn to save registers
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    C = C + (rm[:, None] * stride_cm + rn[None, :] * stride_cn)
    mask = (rm < M)[:, None] & (rn < N)[None, :]
    tl.store(C, acc, mask=mask)


_BLOCKS = [(BLOCK_K, BLOCK_M, BLOCK_N) for BLOCK_K in [16, 32, 64] for BLOCK_M in [16, 64] for BLOCK_N in [16, 64, 128]]
_CASES = ([(64, 16, 64, w, x, o) for w in input_dtypes for x in input_dtypes for o in out_dtypes]
          + [blocks + pair + (o,) for blocks in _BLOCKS if blocks != (64, 16, 64)
             for pair in [("float16", "float32"), ("int8", "bfloat16")] for o in out_dtypes])


@pytest.mark.parametrize("M, K, N", [(128, 96, 160)])
@pytest.mark.parametrize("BLOCK_K, BLOCK_M, BLOCK_N, w_dtype, x_dtype, out_dtype", _CASES)
def test_cast_matmul(M, K, N, BLOCK_K, BLOCK_M, BLOCK_N, w_dtype, x_dtype, out_dtype, device):
    if x_dtype == w_dtype:
        pytest.skip("skip the same input dtype")
    rs = np.random.RandomState(42)

    def init_tensor(dtype, shape):
        if dtype == "int8":
            return rs.randint(0, 2, shape).astype(np.int8)
        elif dtype in ("float8_e4m3fn", "float8_e5m2"):
            return rs.randn(*shape).astype(np.float16).astype(_HOST[dtype])
        else:
            return rs.randn(*shape).astype(_HOST[dtype])

    def compute_dtype(a_dtype, b_dtype):
        size = {d: np.dtype(_HOST[d]).itemsize for d in (a_dtype, b_dtype)}
        # a holds the larger dtype
        if size[a_dtype] < size[b_dtype]:
            a_dtype, b_dtype = b_dtype, a_dtype
        # If they are both 1 byte or float16 and (1 byte or float16)
        if size[a_dtype] == 1 or (a_dtype == "float16" and b_dtype != "bfloat16"):
            return "float16"
        else:
            return "float32"

    a = init_tensor(w_dtype, (M, K))
    b = init_tensor(x_dtype, (K, N))

    out_np = np.dtype(out_dtype)
    # torch.matmul in the output type: products summed in fp32, rounded once to the output
    out_torch = (a.astype(out_np).astype(np.float32) @ b.astype(out_np).astype(np.float32)).astype(out_np)
    out_triton = np.empty((M, N), dtype=out_np)
    compute_triton = getattr(tl, compute_dtype(w_dtype, x_dtype))

    # launch kernel
    block_m, block_n, block_k = BLOCK_M, BLOCK_N, BLOCK_K
    grid = ((triton.cdiv(M, block_m) * triton.cdiv(N, block_n)), 1)

    matmul_kernel[grid](
        a, b, out_triton, M, N, K,  #
        a.strides[0] // a.itemsize, a.strides[1] // a.itemsize,  #
        b.strides[0] // b.itemsize, b.strides[1] // b.itemsize,  #
        out_triton.strides[0] // out_triton.itemsize, out_triton.strides[1] // out_triton.itemsize,  #
        compute_triton, GROUP_M=8,  #
        BLOCK_M=block_m,  #
        BLOCK_N=block_n,  #
        BLOCK_K=block_k)

    np.testing.assert_allclose(out_triton.astype(np.float32), out_torch.astype(np.float32), atol=0.3, rtol=0.01)


# ---------------------------------------------------------------- test_dedup_mma.py
def test_elementwise_dedupe():
    def numpy_kernel():
        mask = np.ones((16, 16), dtype=bool)
        mask &= (np.arange(0, 16) < 2)[:, None]
        x = np.zeros((16, 16), dtype=np.float32)
        dot = x @ x
        masked = np.where(mask, dot, 1)
        return masked @ np.ones((16, 16), dtype=np.float32)

    @triton.jit
    def kernel(out_ptr):
        # Make a 16x16 mask where `mask[0:2,:] == False`
        mask = tl.full([16, 16], 1, dtype=tl.int1)
        mask &= (tl.arange(0, 16) < 2)[:, None]
        # Force the mask encoding to #mma so it needs convert to #dot.
        x = tl.zeros([16, 16], tl.float32)
        # make sure it converts to dot
        dot = tl.dot(x, x)
        res = tl.where(mask, dot, 1)
        res = tl.dot(res, tl.full(x.shape, 1, x.dtype))
        out_ptr = tl.make_block_ptr(
            out_ptr,
            shape=(16, 16),
            strides=(16, 1),
            offsets=(0, 0),
            block_shape=(16, 16),
            order=(0, 1),
        )
        tl.store(out_ptr, res)

    baseline_res = numpy_kernel()

    gpu_res = np.zeros((16, 16), np.float32)
    kernel[(1,)](gpu_res)

    # Triton's test compares an undefined `triton_res`; the result it means is the kernel's
    np.testing.assert_allclose(gpu_res, baseline_res)


# ---------------------------------------------------------------- test_tensormap_predication.py
def test_tensormap_create_in_loop_with_dot(device):
    """Issue #10229: a descriptor made inside a loop with tl.dot."""

    BLOCK_M: tl.constexpr = 16
    BLOCK_N: tl.constexpr = 64

    @triton.jit
    def kernel(
        out_ptr,
        a_ptr,
        b_ptr,
        M: tl.constexpr,
        N: tl.constexpr,
        K: tl.constexpr,
        BLOCK_M: tl.constexpr,
        BLOCK_N: tl.constexpr,
        BLOCK_K: tl.constexpr,
    ):
        pid_m = tl.program_id(0)
        m_off = pid_m * BLOCK_M

        b_desc = tl.make_tensor_descriptor(
            b_ptr,
            shape=[K, N],
            strides=[N, 1],
            block_shape=[BLOCK_K, BLOCK_N],
        )

        acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)

        for k in range(0, K, BLOCK_K):
            # Create a new descriptor each iteration — this triggers #10229
            # because the pipeliner encounters TensormapCreateOp inside the
            # loop body and needs PredicatedOpInterface to predicate it.
            a_desc = tl.make_tensor_descriptor(
                a_ptr + m_off * K + k,
                shape=[BLOCK_M, BLOCK_K],
                strides=[K, 1],
                block_shape=[BLOCK_M, BLOCK_K],
            )
            a = a_desc.load([0, 0]).to(tl.float32)
            b = b_desc.load([k, 0]).to(tl.float32)
            acc += tl.dot(a, b)

        out_offs = m_off * N + tl.arange(0, BLOCK_M)[:, None] * N + tl.arange(0, BLOCK_N)[None, :]
        mask = (m_off + tl.arange(0, BLOCK_M)[:, None] < M) & (tl.arange(0, BLOCK_N)[None, :] < N)
        tl.store(out_ptr + out_offs, acc.to(tl.float16), mask=mask)

    M, N, K = 32, 64, 64
    BLOCK_K: tl.constexpr = 16
    rs = np.random.RandomState(0)
    A = rs.randn(M, K).astype(np.float16)
    B = rs.randn(K, N).astype(np.float16)
    C_ref = (A.astype(np.float32) @ B.astype(np.float32)).astype(np.float16)
    C = np.zeros((M, N), dtype=np.float16)

    def alloc_fn(size: int, align: int, stream):
        return np.empty(size, dtype=np.int8)

    triton.set_allocator(alloc_fn)

    grid = (triton.cdiv(M, BLOCK_M),)
    kernel[grid](
        C, A, B, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K,
    )

    np.testing.assert_allclose(C.astype(np.float32), C_ref.astype(np.float32), rtol=1e-2, atol=1e-2)


def test_tensormap_create_paged_qk(device):
    """Paged KV cache QK^T: a descriptor per page, made inside the loop from a page table."""

    PAGE_SIZE: tl.constexpr = 16
    BLOCK_M: tl.constexpr = 16
    HEAD_SIZE: tl.constexpr = 64
    NUM_PAGES: tl.constexpr = 4

    @triton.jit
    def paged_qk_kernel(
        out_ptr,
        q_ptr,
        k_cache_ptr,
        page_table_ptr,
        stride_page,
        stride_head,
        num_pages: tl.constexpr,
        PAGE_SIZE: tl.constexpr,
        BLOCK_M: tl.constexpr,
        HEAD_SIZE: tl.constexpr,
    ):
        pid = tl.program_id(0)

        # Load single Q token
        q = tl.load(q_ptr + tl.arange(0, HEAD_SIZE)).to(tl.float32)
        q_vec = q.reshape(1, HEAD_SIZE)

        acc = tl.zeros([1, BLOCK_M], dtype=tl.float32)

        for page_idx in range(num_pages):
            # Map logical page → physical page
            phys_page = tl.load(page_table_ptr + page_idx)
            base = k_cache_ptr + phys_page * stride_page

            # Create descriptor for this page's K block — triggers #10229
            k_desc = tl.make_tensor_descriptor(
                base,
                shape=[PAGE_SIZE, HEAD_SIZE],
                strides=[stride_head, 1],
                block_shape=[BLOCK_M, HEAD_SIZE],
            )

            K_block = k_desc.load([0, 0]).to(tl.float32)
            K_T = tl.trans(K_block)
            qk = tl.dot(q_vec, K_T)
            acc += qk

        # Store accumulated result for this program
        out_offsets = pid * BLOCK_M + tl.arange(0, BLOCK_M)
        mask = out_offsets < num_pages * PAGE_SIZE
        tl.store(out_ptr + out_offsets, acc.reshape(BLOCK_M), mask=mask)

    num_pages = NUM_PAGES
    page_table = np.array([0, 3, 7, 2], dtype=np.int32)
    rs = np.random.RandomState(0)
    k_cache = rs.randn(8, PAGE_SIZE, HEAD_SIZE).astype(np.float16)
    q = rs.randn(HEAD_SIZE).astype(np.float16)
    out = np.zeros((BLOCK_M,), dtype=np.float32)

    # Reference: sum of QK^T across all pages (first BLOCK_M tokens per page)
    q_f32 = q.astype(np.float32)
    ref = np.zeros((BLOCK_M,), dtype=np.float32)
    for i in range(num_pages):
        phys = int(page_table[i])
        K_block = k_cache[phys, :BLOCK_M, :].astype(np.float32)  # (BLOCK_M, HEAD_SIZE)
        ref += q_f32 @ K_block.T

    stride_page = PAGE_SIZE * HEAD_SIZE
    stride_head = HEAD_SIZE

    def alloc_fn(size: int, align: int, stream):
        return np.empty(size, dtype=np.int8)

    triton.set_allocator(alloc_fn)

    paged_qk_kernel[(1,)](
        out, q, k_cache, page_table,
        stride_page, stride_head,
        num_pages, PAGE_SIZE, BLOCK_M, HEAD_SIZE,
    )

    np.testing.assert_allclose(out, ref, rtol=1e-2, atol=1e-2)


# ---------------------------------------------------------------- repro_mmav5_tmem_stale_d.py
BLOCK_N = 64
BLOCK_HEADS = 16
DREL = 16


@triton.jit
def tmem_mmav5_leak_repro_kernel(
    X,
    DY,
    DWT_OUT,
    stride_x_pid,
    stride_x_head,
    stride_dy_pid,
    stride_dy_head,
    stride_out_pid,
    stride_out_row,
    SLEEP_CYCLES: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_HEADS: tl.constexpr,
    DREL: tl.constexpr,
):
    pid = tl.program_id(0)
    offs_n = tl.arange(0, BLOCK_N)
    offs_h = tl.arange(0, BLOCK_HEADS)
    offs_d = tl.arange(0, DREL)

    x_ptr = X + pid * stride_x_pid + offs_h[:, None] * stride_x_head + offs_d[None, :]
    x = tl.load(x_ptr)
    dy_ptr = DY + pid * stride_dy_pid + offs_h[:, None] * stride_dy_head + offs_n[None, :]
    dy = tl.load(dy_ptr)
    acc = tl.zeros((BLOCK_N, DREL), dtype=tl.float32) + 1.0
    dw_t = tl.dot(tl.trans(dy), x, acc=acc)
    if SLEEP_CYCLES > 0:
        tl.inline_asm_elementwise(
            f"nanosleep.u32 {SLEEP_CYCLES}; mov.u32 $0, 0;",
            "=r",
            [],
            dtype=tl.int32,
            is_pure=False,
            pack=1,
        )
    acc = tl.zeros((BLOCK_N, DREL), dtype=tl.float32) + 1.0
    dw_t2 = tl.dot(tl.trans(dy), x + 0.0, acc=acc)
    diff = dw_t2 - dw_t
    max_abs_diff = tl.max(tl.abs(diff))
    if max_abs_diff != 0.0:
        tl.device_print(
            "failure max_abs(dw_t2 - dw_t) != 0.0:",
            max_abs_diff.to(tl.uint32, bitcast=True),
        )
        tl.device_print("max_abs:", max_abs_diff)
        tl.device_print("x:", x)
        tl.device_print("dy:", dy)
        tl.device_print("dw_t:", dw_t)
        tl.device_print("dw_t2:", dw_t2)
    tl.store(
        DWT_OUT + pid * stride_out_pid + offs_n[:, None] * stride_out_row + offs_d[None, :],
        dw_t,
    )


@pytest.mark.parametrize("sleep_cycles", [0, 1])
def test_mmav5_tmem_stale_d(sleep_cycles, capfd):
    """The repro script's run, once: two dots of the same operands (one through `x + 0.0`)
    agree to the bit, so nothing is printed, and the stored dot is the product plus one."""
    num_pids = 8
    rs = np.random.RandomState(0)
    x = rs.randn(num_pids, BLOCK_HEADS, DREL).astype(np.float32).astype(ml_dtypes.bfloat16)
    dy = rs.randn(num_pids, BLOCK_HEADS, BLOCK_N).astype(np.float32).astype(ml_dtypes.bfloat16)
    out = np.zeros((num_pids, BLOCK_N, DREL), dtype=np.float32)
    es = x.itemsize
    tmem_mmav5_leak_repro_kernel[(num_pids,)](
        x,
        dy,
        out,
        *(s // es for s in x.strides[:2]),
        *(s // es for s in dy.strides[:2]),
        *(s // 4 for s in out.strides[:-1]),
        SLEEP_CYCLES=sleep_cycles,
        BLOCK_N=BLOCK_N,
        BLOCK_HEADS=BLOCK_HEADS,
        DREL=DREL,
        num_warps=4,
        maxnreg=255,
        num_stages=1,
    )
    ref = np.einsum("phn,phd->pnd", dy.astype(np.float32), x.astype(np.float32)) + 1.0
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
    assert "failure" not in capfd.readouterr().out
