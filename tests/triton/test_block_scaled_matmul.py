"""Triton's tutorial 10 (python/tutorials/10-block-scaled-matmul.py), its `validate_block_scaled`
and `validate_block_scaled_amd` checks, ported to minitriton: a block-scaled matmul through tensor
descriptors (fp4 or fp8 operands, 5-D preshuffled scales loaded by a descriptor and unshuffled in
the kernel; nvfp4, mxfp4, mxfp8 and fp8 x fp4) and the CDNA4 kernel through pointers (mxfp4 with
scales shuffled for 16- and 32-wide MFMA instructions, unshuffled by a 6-d or 7-d reshape and
permute).

Source: triton-lang/triton at commit d1de12c48613606c1710976ae9da3074cd48c959 (MIT licence).
Kernels unchanged; host code ours on numpy, with `helpers.py` standing in for Triton's
MXFP4Tensor / MXScaleTensor.  Triton runs these on Blackwell or CDNA4 only, at 8192 cubed; here
at 256 x 256 x 512 (the smallest sizes the kernels' block shapes allow).
"""
import ml_dtypes
import numpy as np
import pytest

import minitriton as triton                 # was: import triton
import minitriton.language as tl            # was: import triton.language as tl
from minitriton.tools.tensor_descriptor import TensorDescriptor

from .helpers import E2M1_VALUES, e8m0_from_float, e8m0_values, mxfp4_pack, mxfp4_random


def _matmul_launch_metadata(grid, kernel, args):
    ret = {}
    M, N, K = args["M"], args["N"], args["K"]
    ret["name"] = f"{kernel.name} [M={M}, N={N}, K={K}]"
    ret["flops"] = 2.0 * M * N * K
    return ret


@triton.jit(launch_metadata=_matmul_launch_metadata)
def block_scaled_matmul_kernel(  #
        a_desc,  #
        a_scale_desc,  #
        b_desc,  #
        b_scale_desc,  #
        c_desc,  #
        M: tl.constexpr,  #
        N: tl.constexpr,  #
        K: tl.constexpr,  #
        output_type: tl.constexpr,  #
        ELEM_PER_BYTE_A: tl.constexpr,  #
        ELEM_PER_BYTE_B: tl.constexpr,  #
        VEC_SIZE: tl.constexpr,  #
        BLOCK_M: tl.constexpr,  #
        BLOCK_N: tl.constexpr,  #
        BLOCK_K: tl.constexpr,  #
        rep_m: tl.constexpr,  #
        rep_n: tl.constexpr,  #
        rep_k: tl.constexpr,  #
        NUM_STAGES: tl.constexpr,  #
):  #
    if output_type == 0:
        output_dtype = tl.float32
    elif output_type == 1:
        output_dtype = tl.float16
    elif output_type == 2:
        output_dtype = tl.float8e4nv

    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    pid_m = pid % num_pid_m
    pid_n = pid // num_pid_m
    offs_am = pid_m * BLOCK_M
    offs_bn = pid_n * BLOCK_N
    offs_k_a = 0
    offs_k_b = 0
    offs_scale_m = pid_m * rep_m
    offs_scale_n = pid_n * rep_n
    offs_scale_k = 0

    MIXED_PREC: tl.constexpr = ELEM_PER_BYTE_A == 1 and ELEM_PER_BYTE_B == 2

    accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), num_stages=NUM_STAGES):
        a = a_desc.load([offs_am, offs_k_a])
        b = b_desc.load([offs_bn, offs_k_b])
        scale_a = a_scale_desc.load([0, offs_scale_m, offs_scale_k, 0, 0])
        scale_b = b_scale_desc.load([0, offs_scale_n, offs_scale_k, 0, 0])

        scale_a = scale_a.reshape(rep_m, rep_k, 32, 4, 4).trans(0, 3, 2, 1, 4).reshape(BLOCK_M, BLOCK_K // VEC_SIZE)
        scale_b = scale_b.reshape(rep_n, rep_k, 32, 4, 4).trans(0, 3, 2, 1, 4).reshape(BLOCK_N, BLOCK_K // VEC_SIZE)

        if MIXED_PREC:
            accumulator = tl.dot_scaled(a, scale_a, "e4m3", b.T, scale_b, "e2m1", accumulator)
        elif ELEM_PER_BYTE_A == 2 and ELEM_PER_BYTE_B == 2:
            accumulator = tl.dot_scaled(a, scale_a, "e2m1", b.T, scale_b, "e2m1", accumulator)
        else:
            accumulator = tl.dot_scaled(a, scale_a, "e4m3", b.T, scale_b, "e4m3", accumulator)

        offs_k_a += BLOCK_K // ELEM_PER_BYTE_A
        offs_k_b += BLOCK_K // ELEM_PER_BYTE_B
        offs_scale_k += rep_k

    c_desc.store([offs_am, offs_bn], accumulator.to(output_dtype))


def _unpack_scale(packed):
    """The tutorial's reference layout: (chunks of 128 rows, chunks of 4 scales, 32, 4, 4) back to 2-d."""
    packed = packed.reshape(*packed.shape[:-2], 32, 4, 4)
    num_chunk_m, num_chunk_k = packed.shape[:2]
    return packed.transpose(0, 3, 2, 1, 4).reshape(num_chunk_m * 128, num_chunk_k * 4)


def _initialize_block_scaled(M, N, K, block_scale_type, rs):
    """The tutorial's initialize_block_scaled: descriptors, the scale layout and the reference."""
    BLOCK_M, BLOCK_N = 128, 256
    BLOCK_K = 256 if "fp4" in block_scale_type else 128
    VEC_SIZE = 16 if block_scale_type == "nvfp4" else 32
    ELEM_PER_BYTE_A = 2 if "fp4" in block_scale_type else 1
    ELEM_PER_BYTE_B = 1 if block_scale_type == "mxfp8" else 2
    a_codes, b_codes = mxfp4_random((M, K), rs), mxfp4_random((N, K), rs)
    a_ref, b_ref = E2M1_VALUES[a_codes], E2M1_VALUES[b_codes]
    a = a_ref.astype(ml_dtypes.float8_e4m3fn) if block_scale_type in ("mxfp8", "mixed") else mxfp4_pack(a_codes, 1)
    b = b_ref.astype(ml_dtypes.float8_e4m3fn) if block_scale_type == "mxfp8" else mxfp4_pack(b_codes, 1)
    a_desc = TensorDescriptor.from_tensor(a, [BLOCK_M, BLOCK_K // ELEM_PER_BYTE_A])
    b_desc = TensorDescriptor.from_tensor(b, [BLOCK_N, BLOCK_K // ELEM_PER_BYTE_B])

    a_scale_shape = [M // 128, K // VEC_SIZE // 4, 32, 16]
    b_scale_shape = [N // 128, K // VEC_SIZE // 4, 32, 16]
    a_scale = (rs.random_sample(a_scale_shape) + 1e-8).astype(np.float32)
    b_scale = (rs.random_sample(b_scale_shape) + 1e-8).astype(np.float32)
    if block_scale_type == "nvfp4":
        a_scale, b_scale = a_scale.astype(ml_dtypes.float8_e4m3fn), b_scale.astype(ml_dtypes.float8_e4m3fn)
        a_scale_ref, b_scale_ref = a_scale.astype(np.float32), b_scale.astype(np.float32)
    else:
        a_scale, b_scale = e8m0_from_float(a_scale), e8m0_from_float(b_scale)
        a_scale_ref, b_scale_ref = e8m0_values(a_scale), e8m0_values(b_scale)
    rep_m, rep_n, rep_k = BLOCK_M // 128, BLOCK_N // 128, BLOCK_K // VEC_SIZE // 4
    a_scale = a_scale.reshape(1, a_scale_shape[0], a_scale.shape[1], 2, 256)
    b_scale = b_scale.reshape(1, b_scale_shape[0], b_scale.shape[1], 2, 256)
    a_scale_desc = TensorDescriptor.from_tensor(a_scale, block_shape=[1, rep_m, rep_k, 2, 256])
    b_scale_desc = TensorDescriptor.from_tensor(b_scale, block_shape=[1, rep_n, rep_k, 2, 256])

    a_scale_ref = np.repeat(_unpack_scale(a_scale_ref), VEC_SIZE, axis=1)[:M, :K]
    b_scale_ref = np.repeat(_unpack_scale(b_scale_ref), VEC_SIZE, axis=1).T[:K, :N]
    reference = (a_ref * a_scale_ref) @ (b_ref.T * b_scale_ref)
    configs = {"BLOCK_SIZE_M": BLOCK_M, "BLOCK_SIZE_N": BLOCK_N, "BLOCK_SIZE_K": BLOCK_K, "num_stages": 4,
               "ELEM_PER_BYTE_A": ELEM_PER_BYTE_A, "ELEM_PER_BYTE_B": ELEM_PER_BYTE_B, "VEC_SIZE": VEC_SIZE}
    return a_desc, a_scale_desc, b_desc, b_scale_desc, rep_m, rep_n, rep_k, configs, reference


def _block_scaled_matmul(a_desc, a_scale_desc, b_desc, b_scale_desc, M, N, K, rep_m, rep_n, rep_k, configs):
    output = np.empty((M, N), np.float16)
    BLOCK_M, BLOCK_N = configs["BLOCK_SIZE_M"], configs["BLOCK_SIZE_N"]
    c_desc = TensorDescriptor.from_tensor(output, [BLOCK_M, BLOCK_N])
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N), 1)
    block_scaled_matmul_kernel[grid](a_desc, a_scale_desc, b_desc, b_scale_desc, c_desc, M, N, K, 1,
                                     configs["ELEM_PER_BYTE_A"], configs["ELEM_PER_BYTE_B"], configs["VEC_SIZE"],
                                     BLOCK_M, BLOCK_N, configs["BLOCK_SIZE_K"], rep_m, rep_n, rep_k,
                                     configs["num_stages"])
    return output


@pytest.mark.parametrize("block_scale_type", ["nvfp4", "mxfp4", "mxfp8", "mixed"])
def test_validate_block_scaled(block_scale_type):
    M, N, K = 256, 256, 512
    *args, reference = _initialize_block_scaled(M, N, K, block_scale_type, np.random.RandomState(42))
    a_desc, a_scale_desc, b_desc, b_scale_desc, rep_m, rep_n, rep_k, configs = args
    output = _block_scaled_matmul(a_desc, a_scale_desc, b_desc, b_scale_desc, M, N, K, rep_m, rep_n, rep_k, configs)
    np.testing.assert_allclose(output.astype(np.float32), reference, atol=1e-3, rtol=1e-3)


@triton.jit
def block_scaled_matmul_kernel_cdna4(a_ptr, b_ptr, c_ptr, a_scales_ptr, b_scales_ptr, M, N, K, stride_am, stride_ak,
                                     stride_bk, stride_bn, stride_ck, stride_cm, stride_cn, stride_asm, stride_ask,
                                     stride_bsn, stride_bsk,
                                     # Meta-parameters
                                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                                     mfma_nonkdim: tl.constexpr):
    """Kernel for computing the matmul C = A x B.
    A and B inputs are in the microscale fp4 (mxfp4) format.
    A_scales and B_scales are in e8m0 format.
    A has shape (M, K), B has shape (K, N) and C has shape (M, N)
    """

    pid = tl.program_id(axis=0)

    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n

    # We assume 32 elements along K share the same scale.
    SCALE_GROUP_SIZE: tl.constexpr = 32
    num_k_iter = tl.cdiv(K, BLOCK_K // 2)
    # Create pointers for first block of A and B input matrices
    # The BLOCK sizes are of the elements and in fp4 we pack 2 per uint8 container.
    offs_k = tl.arange(0, BLOCK_K // 2)
    offs_k_split = offs_k
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k_split[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k_split[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    # Create pointers for the first block of A and B scales
    offs_asn = (pid_n * (BLOCK_N // 32) + tl.arange(0, (BLOCK_N // 32))) % N
    offs_ks = tl.arange(0, BLOCK_K // SCALE_GROUP_SIZE * 32)

    # B scales are N x K even though B operand is K x N.
    b_scale_ptrs = (b_scales_ptr + offs_asn[:, None] * stride_bsn + offs_ks[None, :] * stride_bsk)
    offs_asm = (pid_m * (BLOCK_M // 32) + tl.arange(0, (BLOCK_M // 32))) % M
    a_scale_ptrs = (a_scales_ptr + offs_asm[:, None] * stride_asm + offs_ks[None, :] * stride_ask)
    accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)

    for k in range(0, num_k_iter):
        # Here we "undo" the shuffle done in global memory (shuffle_scales_cdna4 function).
        if mfma_nonkdim == 32:
            a_scales = tl.load(a_scale_ptrs).reshape(BLOCK_M // 32, BLOCK_K // SCALE_GROUP_SIZE // 8, 2, 32, 4,
                                                     1).permute(0, 3, 1, 4, 2,
                                                                5).reshape(BLOCK_M, BLOCK_K // SCALE_GROUP_SIZE)
            b_scales = tl.load(b_scale_ptrs).reshape(BLOCK_N // 32, BLOCK_K // SCALE_GROUP_SIZE // 8, 2, 32, 4,
                                                     1).permute(0, 3, 1, 4, 2,
                                                                5).reshape(BLOCK_N, BLOCK_K // SCALE_GROUP_SIZE)
        elif mfma_nonkdim == 16:
            a_scales = tl.load(a_scale_ptrs).reshape(BLOCK_M // 32, BLOCK_K // SCALE_GROUP_SIZE // 8, 4, 16, 2, 2,
                                                     1).permute(0, 5, 3, 1, 4, 2,
                                                                6).reshape(BLOCK_M, BLOCK_K // SCALE_GROUP_SIZE)
            b_scales = tl.load(b_scale_ptrs).reshape(BLOCK_N // 32, BLOCK_K // SCALE_GROUP_SIZE // 8, 4, 16, 2, 2,
                                                     1).permute(0, 5, 3, 1, 4, 2,
                                                                6).reshape(BLOCK_N, BLOCK_K // SCALE_GROUP_SIZE)

        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs, cache_modifier=None)

        accumulator += tl.dot_scaled(a, a_scales, "e2m1", b, b_scales, "e2m1")

        # Advance the ptrs to the next K block.
        a_ptrs += (BLOCK_K // 2) * stride_ak
        b_ptrs += (BLOCK_K // 2) * stride_bk

        a_scale_ptrs += BLOCK_K * stride_ask
        b_scale_ptrs += BLOCK_K * stride_bsk

    c = accumulator.to(c_ptr.type.element_ty)

    # Write back the block of the output matrix C with masks.
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M).to(tl.int64)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N).to(tl.int64)
    c_ptrs = (c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :])
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)

    tl.store(c_ptrs, c, mask=c_mask, cache_modifier=".wt")


def _shuffle_scales_cdna4(scales, mfma_nonkdim):
    sm, sn = scales.shape
    if mfma_nonkdim == 32:
        scales = scales.reshape(sm // 32, 32, sn // 8, 4, 2, 1).transpose(0, 2, 4, 1, 3, 5)
    elif mfma_nonkdim == 16:
        scales = scales.reshape(sm // 32, 2, 16, sn // 8, 2, 4, 1).transpose(0, 3, 5, 2, 4, 1, 6)
    return np.ascontiguousarray(scales).reshape(sm // 32, sn * 32)


@pytest.mark.parametrize("mfma_nonkdim", [16, 32])
def test_validate_block_scaled_amd(mfma_nonkdim):
    M, N, K = 256, 256, 512
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 256
    rs = np.random.RandomState(5)
    x_codes, w_codes = mxfp4_random((M, K), rs), mxfp4_random((N, K), rs)
    x_scales = rs.randint(124, 128, (K // 32, M)).astype(np.uint8).T
    w_scales = rs.randint(124, 128, (K // 32, N)).astype(np.uint8).T
    x, w = mxfp4_pack(x_codes, 1), mxfp4_pack(w_codes, 1).T       # the kernel reads w as K x N
    # as the tutorial's block_scaled_matmul_amd, K passed is the packed one (bytes, two values each)
    out = np.empty((M, N), np.float32)
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N), 1)
    xs, ws = _shuffle_scales_cdna4(x_scales, mfma_nonkdim), _shuffle_scales_cdna4(w_scales, mfma_nonkdim)
    item = lambda a, d: a.strides[d] // a.itemsize  # noqa: E731
    block_scaled_matmul_kernel_cdna4[grid](x, w, out, xs, ws, M, N, x.shape[1], item(x, 0), item(x, 1), item(w, 0), item(w, 1),
                                           0, item(out, 0), item(out, 1), item(xs, 0), item(xs, 1), item(ws, 0),
                                           item(ws, 1), BLOCK_M, BLOCK_N, BLOCK_K, mfma_nonkdim, num_warps=8,
                                           num_stages=2, matrix_instr_nonkdim=mfma_nonkdim)
    x32 = E2M1_VALUES[x_codes] * np.repeat(e8m0_values(x_scales), 32, axis=1)
    w32 = E2M1_VALUES[w_codes] * np.repeat(e8m0_values(w_scales), 32, axis=1)
    np.testing.assert_allclose(out, x32 @ w32.T, rtol=1.3e-6, atol=1e-5)      # torch.testing's fp32 defaults
