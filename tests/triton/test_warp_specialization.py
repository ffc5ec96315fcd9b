"""Triton's python/test/unit/language/test_warp_specialization.py, ported to minitriton: the
kernels that run (not the three written in TTIR/TTGIR, which minitriton does not read) — a
matmul and a persistent matmul through tensor descriptors whose K or tile loop is
`tl.range(..., warp_specialize=True)` (the persistent one also `flatten=`), Flash Attention's
inner loop with and without warp specialisation and in a persistent form, and a grouped GEMM
walking a table of 64-bit addresses with descriptors made inside the loop.

Source: triton-lang/triton (MIT licence), the stored copy at commit
04ae77fd095313e3009421c4c297a6952168ea34.  Kernels unchanged; host code ours on numpy.  Triton
runs them on Hopper or Blackwell only and also checks the TTGIR it compiled
(`ttg.warp_specialize`, `tc_gen5_mma`), which minitriton has none of: here the numbers are
checked as Triton checks them (cuBLAS -> numpy's fp32 product of the same inputs, at Triton's
tolerances; the warp-specialised and persistent attentions equal to the plain one to the bit)
and, for fp16 attention, against numpy's attention too.  Sizes and parametrizations reduced
(Triton: up to 8192, the GPU's SM count; here up to 256 and 4 programs, so that persistent
programs take several tiles).
"""
import ml_dtypes
import numpy as np
import pytest

import minitriton as triton                 # was: import triton
import minitriton.language as tl            # was: import triton.language as tl
from minitriton.tools.tensor_descriptor import TensorDescriptor

FP8 = ml_dtypes.float8_e4m3fn               # torch.float8_e4m3fn


def alloc_fn(size, align, stream):
    return np.empty(size, dtype=np.int8)


@triton.jit
def _compute_pid(tile_id, num_pid_n, num_pid_m, GROUP_SIZE_M):
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = tile_id // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + (tile_id % group_size_m)
    pid_n = (tile_id % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@triton.jit
def matmul_tma_ws_kernel(  #
        a_ptr, b_ptr, c_ptr,  #
        a_stride0, a_stride1,  #
        b_stride0, b_stride1,  #
        c_stride0, c_stride1,  #
        M, N, K,  #
        num_stages: tl.constexpr,  #
        BLOCK_SIZE_M: tl.constexpr,  #
        BLOCK_SIZE_N: tl.constexpr,  #
        BLOCK_SIZE_K: tl.constexpr,  #
        GROUP_SIZE_M: tl.constexpr,  #
        USE_FP8: tl.constexpr,  #
):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[a_stride0, a_stride1],
                                       block_shape=[BLOCK_SIZE_M, BLOCK_SIZE_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[b_stride0, b_stride1],
                                       block_shape=[BLOCK_SIZE_N, BLOCK_SIZE_K])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[c_stride0, c_stride1],
                                       block_shape=[BLOCK_SIZE_M, BLOCK_SIZE_N])

    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    pid_m, pid_n = _compute_pid(pid, num_pid_n, num_pid_m, GROUP_SIZE_M)

    k_tiles = tl.cdiv(K, BLOCK_SIZE_K)

    off_am = pid_m * BLOCK_SIZE_M
    off_bn = pid_n * BLOCK_SIZE_N
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in tl.range(k_tiles, warp_specialize=True, num_stages=num_stages):
        off_k = k * BLOCK_SIZE_K
        a = a_desc.load((off_am, off_k))
        b = b_desc.load((off_bn, off_k))
        accumulator = tl.dot(a, b.T, accumulator)

    c = accumulator.to(tl.float8e4nv if USE_FP8 else tl.float16)
    c_desc.store((off_am, off_bn), c)


def exceeds_smem_capacity(num_stages, BLOCK_M, BLOCK_N, BLOCK_K, use_fp8):
    return (num_stages * BLOCK_K * (BLOCK_M + BLOCK_N) + BLOCK_M * BLOCK_N) * (1 if use_fp8 else 2) > 228 * 1024


def _operands(M, N, K, use_fp8):
    """A (M, K), B (N, K), C (M, N) as Triton's test makes them (randn fp16, then fp8 if asked)."""
    rs = np.random.RandomState(42)
    dtype = FP8 if use_fp8 else np.float16
    return [rs.standard_normal(shape).astype(np.float16).astype(dtype) for shape in ((M, K), (N, K), (M, N))]


def _check_matmul(A, B, C):
    """cublas.matmul(A, B, ref_out): A @ B^T in fp32, rounded to the output type; Triton's tolerance."""
    ref = (A.astype(np.float32) @ B.astype(np.float32).T).astype(C.dtype)
    np.testing.assert_allclose(C.astype(np.float32), ref.astype(np.float32), atol=0.03, rtol=0.03)


@pytest.mark.parametrize("M, N, K", [(32, 32, 32), (256, 256, 192)])
@pytest.mark.parametrize("BLOCK_SIZE_M", [128])
@pytest.mark.parametrize("BLOCK_SIZE_N", [128, 256])
@pytest.mark.parametrize("BLOCK_SIZE_K", [64])
@pytest.mark.parametrize("num_stages", [2, 3])
@pytest.mark.parametrize("num_warps", [4])
@pytest.mark.parametrize("use_fp8", [False, True])
def test_warp_specialize_tma_matmul(M, N, K, BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K, num_stages, num_warps, use_fp8):
    if exceeds_smem_capacity(num_stages, BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K, use_fp8=use_fp8):
        pytest.skip("uses too much shared memory")
    GROUP_SIZE_M = 8
    A, B, C = _operands(M, N, K, use_fp8)
    triton.set_allocator(alloc_fn)
    grid = lambda META: (triton.cdiv(M, META["BLOCK_SIZE_M"]) * triton.cdiv(N, META["BLOCK_SIZE_N"]), )
    matmul_tma_ws_kernel[grid](A, B, C, *(s // A.itemsize for s in A.strides), *(s // B.itemsize for s in B.strides),
                               *(s // C.itemsize for s in C.strides), M, N, K, num_stages, BLOCK_SIZE_M, BLOCK_SIZE_N,
                               BLOCK_SIZE_K, GROUP_SIZE_M, num_warps=num_warps, USE_FP8=use_fp8)
    _check_matmul(A, B, C)


@triton.jit
def matmul_tma_persistent_ws_kernel(  #
        a_ptr, b_ptr, c_ptr,  #
        a_stride0, a_stride1,  #
        b_stride0, b_stride1,  #
        c_stride0, c_stride1,  #
        M, N, K,  #
        num_stages: tl.constexpr,  #
        BLOCK_SIZE_M: tl.constexpr,  #
        BLOCK_SIZE_N: tl.constexpr,  #
        BLOCK_SIZE_K: tl.constexpr,  #
        GROUP_SIZE_M: tl.constexpr,  #
        NUM_SMS: tl.constexpr,  #
        USE_FP8: tl.constexpr,  #
        FLATTEN: tl.constexpr,  #
):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[a_stride0, a_stride1],
                                       block_shape=[BLOCK_SIZE_M, BLOCK_SIZE_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[b_stride0, b_stride1],
                                       block_shape=[BLOCK_SIZE_N, BLOCK_SIZE_K])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[c_stride0, c_stride1],
                                       block_shape=[BLOCK_SIZE_M, BLOCK_SIZE_N])

    start_pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    k_tiles = tl.cdiv(K, BLOCK_SIZE_K)
    num_tiles = num_pid_m * num_pid_n

    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=FLATTEN, warp_specialize=True,
                            num_stages=num_stages):
        pid_m, pid_n = _compute_pid(tile_id, num_pid_n, num_pid_m, GROUP_SIZE_M)

        off_am = pid_m * BLOCK_SIZE_M
        off_bn = pid_n * BLOCK_SIZE_N
        accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for ki in range(k_tiles):
            off_k = ki * BLOCK_SIZE_K
            a = a_desc.load((off_am, off_k))
            b = b_desc.load((off_bn, off_k))
            accumulator = tl.dot(a, b.T, accumulator)

        c = accumulator.to(tl.float8e4nv if USE_FP8 else tl.float16)
        c_desc.store((off_am, off_bn), c)


@pytest.mark.parametrize("M, N, K", [(32, 32, 32), (384, 256, 128)])
@pytest.mark.parametrize("BLOCK_SIZE_M", [128])
@pytest.mark.parametrize("BLOCK_SIZE_N", [128])
@pytest.mark.parametrize("BLOCK_SIZE_K", [64, 128])
@pytest.mark.parametrize("num_stages", [2])
@pytest.mark.parametrize("num_warps", [4, 8])
@pytest.mark.parametrize("use_fp8", [False, True])
@pytest.mark.parametrize("flatten", [False, True])
def test_warp_specialize_tma_matmul_persistent(M, N, K, BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K, num_stages, num_warps,
                                               use_fp8, flatten):
    if exceeds_smem_capacity(num_stages, BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K, use_fp8):
        pytest.skip("uses too much shared memory")
    GROUP_SIZE_M = 8
    NUM_SMS = 4                             # Triton: the GPU's SM count; here fewer programs than tiles
    A, B, C = _operands(M, N, K, use_fp8)
    triton.set_allocator(alloc_fn)

    def grid(META):
        return (min(NUM_SMS, triton.cdiv(M, META["BLOCK_SIZE_M"]) * triton.cdiv(N, META["BLOCK_SIZE_N"])), )

    matmul_tma_persistent_ws_kernel[grid](A, B, C, *(s // A.itemsize for s in A.strides),
                                          *(s // B.itemsize for s in B.strides), *(s // C.itemsize for s in C.strides),
                                          M, N, K, num_stages, BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K, GROUP_SIZE_M,
                                          NUM_SMS, num_warps=num_warps, USE_FP8=use_fp8, FLATTEN=flatten)
    _check_matmul(A, B, C)


@triton.jit
def attention_inner_loop_kernel(  #
        desc_q, desc_k, desc_v,  #
        desc_acc, l_i_ptr, m_i_ptr,  #
        M, N, qk_scale,  #
        BLOCK_M: tl.constexpr,  #
        HEAD_DIM: tl.constexpr,  #
        warp_specialize: tl.constexpr  #
):
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)

    off_m = tl.program_id(0) * BLOCK_M
    q = desc_q.load([off_m, 0])

    for start_n in tl.range(0, N, HEAD_DIM, warp_specialize=warp_specialize):
        start_n = tl.multiple_of(start_n, HEAD_DIM)
        k = desc_k.load([start_n, 0]).T

        qk = tl.dot(q, k)

        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_ij)
        l_ij = tl.sum(p, 1)
        acc = acc * alpha[:, None]

        v = desc_v.load([start_n, 0])
        p = p.to(v.dtype)
        acc = tl.dot(p, v, acc)

        l_i = l_i * alpha + l_ij
        m_i = m_ij

    desc_acc.store([off_m, 0], acc.to(q.dtype))
    tl.store(l_i_ptr + off_m + tl.arange(0, BLOCK_M), l_i)
    tl.store(m_i_ptr + off_m + tl.arange(0, BLOCK_M), m_i)


@triton.jit
def attention_persistent_inner_loop_kernel(  #
        desc_q, desc_k, desc_v,  #
        desc_acc, l_i_ptr, m_i_ptr,  #
        M, N, qk_scale,  #
        BLOCK_M: tl.constexpr,  #
        HEAD_DIM: tl.constexpr,  #
        warp_specialize: tl.constexpr,  #
        num_stages: tl.constexpr
):
    prog_id = tl.program_id(0)
    num_sm = tl.num_programs(0)
    num_tiles = tl.cdiv(M, BLOCK_M)

    tiles_per_sm = num_tiles // num_sm
    if prog_id < num_tiles % num_sm:
        tiles_per_sm += 1

    tile_idx = prog_id
    for _ in tl.range(0, tiles_per_sm, warp_specialize=warp_specialize, num_stages=num_stages):
        m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
        l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
        acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)

        off_m = tile_idx * BLOCK_M
        q = desc_q.load([off_m, 0])

        for start_n in tl.range(0, N, HEAD_DIM):
            start_n = tl.multiple_of(start_n, HEAD_DIM)
            k = desc_k.load([start_n, 0]).T

            qk = tl.dot(q, k)

            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
            p = tl.math.exp2(qk)
            alpha = tl.math.exp2(m_i - m_ij)
            l_ij = tl.sum(p, 1)
            acc = acc * alpha[:, None]

            v = desc_v.load([start_n, 0])
            p = p.to(v.dtype)
            acc = tl.dot(p, v, acc)

            l_i = l_i * alpha + l_ij
            m_i = m_ij

        desc_acc.store([off_m, 0], acc.to(q.dtype))
        tl.store(l_i_ptr + off_m + tl.arange(0, BLOCK_M), l_i)
        tl.store(m_i_ptr + off_m + tl.arange(0, BLOCK_M), m_i)

        tile_idx += num_sm


def _attention_inputs(M, N, HEAD_DIM, BLOCK_M, use_fp8):
    rs = np.random.RandomState(42)
    dtype = FP8 if use_fp8 else np.float16
    q, k, v = (rs.standard_normal(shape).astype(np.float32).astype(dtype)
               for shape in ((M, HEAD_DIM), (N, HEAD_DIM), (N, HEAD_DIM)))
    descs = [TensorDescriptor(x, shape=list(x.shape), strides=[HEAD_DIM, 1], block_shape=[BLOCK_M, HEAD_DIM])
             for x in (q, k, v)]
    return (q, k, v), descs


def _attention_outputs(M, HEAD_DIM, BLOCK_M, dtype):
    acc, l_i, m_i = np.empty((M, HEAD_DIM), dtype), np.empty((M, ), dtype), np.empty((M, ), dtype)
    desc_acc = TensorDescriptor(acc, shape=[M, HEAD_DIM], strides=[HEAD_DIM, 1], block_shape=[BLOCK_M, HEAD_DIM])
    return (acc, l_i, m_i), desc_acc


def _same_bits(got, want):
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.astype(np.float32), w.astype(np.float32))


@pytest.mark.parametrize("M, N", [(256, 256), (128, 192)])
@pytest.mark.parametrize("BLOCK_M", [64])
@pytest.mark.parametrize("HEAD_DIM", [64])
@pytest.mark.parametrize("num_stages", [2])
@pytest.mark.parametrize("num_warps", [4])
@pytest.mark.parametrize("use_fp8", [False, True])
def test_warp_specialize_attention_forward(M, N, BLOCK_M, HEAD_DIM, num_stages, num_warps, use_fp8):
    (q, k, v), (desc_q, desc_k, desc_v) = _attention_inputs(M, N, HEAD_DIM, BLOCK_M, use_fp8)
    ref, desc_acc_ref = _attention_outputs(M, HEAD_DIM, BLOCK_M, q.dtype)
    out, desc_acc = _attention_outputs(M, HEAD_DIM, BLOCK_M, q.dtype)
    attention_inner_loop_kernel[(M // BLOCK_M, )](desc_q, desc_k, desc_v, desc_acc_ref, ref[1], ref[2], M, N, 0.5,
                                                  BLOCK_M, HEAD_DIM, False, num_stages=num_stages, num_warps=num_warps)
    attention_inner_loop_kernel[(M // BLOCK_M, )](desc_q, desc_k, desc_v, desc_acc, out[1], out[2], M, N, 0.5, BLOCK_M,
                                                  HEAD_DIM, True, num_stages=num_stages, num_warps=num_warps)
    _same_bits(out, ref)
    if not use_fp8 and BLOCK_M == HEAD_DIM:     # ours: numpy's unnormalised attention (K and V tiled exactly)
        s = q.astype(np.float32) @ k.astype(np.float32).T * 0.5
        m = s.max(1)
        p = np.exp2(s - m[:, None])
        np.testing.assert_allclose(ref[2].astype(np.float32), m, rtol=1e-3, atol=1e-3)
        np.testing.assert_allclose(ref[1].astype(np.float32), p.sum(1), rtol=2e-3)
        np.testing.assert_allclose(ref[0].astype(np.float32), p.astype(np.float16).astype(np.float32) @ v.astype(np.float32),
                                   rtol=1e-2, atol=2e-2)


@pytest.mark.parametrize("M, N", [(448, 256), (256, 128)])
@pytest.mark.parametrize("BLOCK_M", [64])
@pytest.mark.parametrize("HEAD_DIM", [64])
@pytest.mark.parametrize("num_stages", [2])
@pytest.mark.parametrize("num_warps", [4])
@pytest.mark.parametrize("use_fp8", [False, True])
def test_warp_specialize_attention_persistent_forward(M, N, BLOCK_M, HEAD_DIM, num_stages, num_warps, use_fp8):
    (q, k, v), (desc_q, desc_k, desc_v) = _attention_inputs(M, N, HEAD_DIM, BLOCK_M, use_fp8)
    ref, desc_acc_ref = _attention_outputs(M, HEAD_DIM, BLOCK_M, q.dtype)
    out, desc_acc = _attention_outputs(M, HEAD_DIM, BLOCK_M, q.dtype)
    NUM_SM = 4   # as Triton's test: fewer programs than tiles (7 or 4 here), uneven counts at M = 448
    attention_persistent_inner_loop_kernel[(NUM_SM, )](desc_q, desc_k, desc_v, desc_acc, out[1], out[2], M, N, 0.5,
                                                       BLOCK_M, HEAD_DIM, True, num_stages=num_stages,
                                                       num_warps=num_warps)
    attention_inner_loop_kernel[(M // BLOCK_M, )](desc_q, desc_k, desc_v, desc_acc_ref, ref[1], ref[2], M, N, 0.5,
                                                  BLOCK_M, HEAD_DIM, False, num_stages=num_stages, num_warps=num_warps)
    _same_bits(out, ref)


@triton.jit
def grouped_matmul_tma_kernel(
    group_a_ptrs,
    group_b_ptrs,
    group_c_ptrs,
    gm, gn, gk,
    g_lds,
    group_size,
    NUM_SM: tl.constexpr,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
    BLOCK_SIZE_K: tl.constexpr,
):
    dtype = tl.float16
    num_m_tiles = tl.cdiv(gm, BLOCK_SIZE_M)
    num_n_tiles = tl.cdiv(gn, BLOCK_SIZE_N)
    num_tiles = num_m_tiles * num_n_tiles
    start_pid = tl.program_id(axis=0)

    for g in tl.range(group_size, warp_specialize=True):
        lda = tl.load(g_lds + g * 3)
        ldb = tl.load(g_lds + g * 3 + 1)
        ldc = tl.load(g_lds + g * 3 + 2)

        a_ptr = tl.load(group_a_ptrs + g).to(tl.pointer_type(dtype))
        b_ptr = tl.load(group_b_ptrs + g).to(tl.pointer_type(dtype))
        c_ptr = tl.load(group_c_ptrs + g).to(tl.pointer_type(dtype))

        a_desc = tl.make_tensor_descriptor(
            a_ptr,
            shape=[gm, gk],
            strides=[lda, 1],
            block_shape=[BLOCK_SIZE_M, BLOCK_SIZE_K],
        )

        b_desc = tl.make_tensor_descriptor(
            b_ptr,
            shape=[gn, gk],
            strides=[ldb, 1],
            block_shape=[BLOCK_SIZE_N, BLOCK_SIZE_K],
        )
        c_desc = tl.make_tensor_descriptor(
            c_ptr,
            shape=[gm, gn],
            strides=[ldc, 1],
            block_shape=[BLOCK_SIZE_M, BLOCK_SIZE_N],
        )

        for tile_idx in tl.range(start_pid, num_tiles, NUM_SM):
            tile_m_idx = tile_idx // num_n_tiles
            tile_n_idx = tile_idx % num_n_tiles
            offs_am = tile_m_idx * BLOCK_SIZE_M
            offs_bn = tile_n_idx * BLOCK_SIZE_N

            accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
            for kk in range(0, tl.cdiv(gk, BLOCK_SIZE_K)):
                a = a_desc.load([offs_am, kk * BLOCK_SIZE_K])
                b = b_desc.load([offs_bn, kk * BLOCK_SIZE_K])
                accumulator += tl.dot(a, b.T)

            offs_cm = tile_m_idx * BLOCK_SIZE_M
            offs_cn = tile_n_idx * BLOCK_SIZE_N

            c = accumulator.to(dtype)
            c_desc.store([offs_cm, offs_cn], c)


def group_gemm_tma_fn(group_A, group_B):
    assert len(group_A) == len(group_B)
    group_size = len(group_A)
    M, K = group_A[0].shape
    N, _ = group_B[0].shape
    group_C = [np.empty((M, N), dtype=A.dtype) for A in group_A]
    addrs = [np.array([triton.data_ptr(x) for x in xs], np.int64) for xs in (group_A, group_B, group_C)]
    g_lds = np.array([s for A, B, C in zip(group_A, group_B, group_C)
                      for s in (A.strides[0] // A.itemsize, B.strides[0] // B.itemsize, C.strides[0] // C.itemsize)],
                     np.int32)
    triton.set_allocator(alloc_fn)
    grid = lambda META: (META['NUM_SM'], )
    grouped_matmul_tma_kernel[grid](*addrs, M, N, K, g_lds, group_size, BLOCK_SIZE_M=128, BLOCK_SIZE_N=128,
                                    BLOCK_SIZE_K=64, NUM_SM=4, num_stages=3)
    return group_C


@pytest.mark.parametrize("M", [128, 384])
@pytest.mark.parametrize("N", [256])
@pytest.mark.parametrize("K", [128, 192])
@pytest.mark.parametrize("group_size", [4])
def test_grouped_gemm(M, N, K, group_size):
    rs = np.random.RandomState(42)
    group_A = [rs.random_sample((M, K)).astype(np.float16) for _ in range(group_size)]
    group_B = [rs.random_sample((K, N)).astype(np.float16) for _ in range(group_size)]
    group_B_T = [np.ascontiguousarray(B.T) for B in group_B]
    ref_out = [(a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16) for a, b in zip(group_A, group_B)]
    tri_tma_out = group_gemm_tma_fn(group_A, group_B_T)
    for i in range(group_size):
        np.testing.assert_allclose(tri_tma_out[i].astype(np.float32), ref_out[i].astype(np.float32), atol=1e-2,
                                   rtol=1e-2)
