"""Triton's tutorials 01-09 (kernels/tutorials.py, written in their style) give numpy's numbers,
launched as the tutorials launch them (`triton.cdiv` grids, meta-parameter callables, launch
options)."""
import numpy as np
import pytest

import minitriton as triton            # was: import triton
from minitriton import locks
from kernels.tutorials import (add_kernel, softmax_persistent, matmul_kernel, seeded_dropout, layer_norm_fwd,
                               layer_norm_dw, attention_fwd, asin_kernel, grouped_gemm, matmul_persistent,
                               matmul_descriptor_persistent)


def test_persistent_softmax():
    x = np.random.default_rng(0).standard_normal((123, 517)).astype(np.float32)
    y = np.empty_like(x)
    softmax_persistent[(8, 1, 1)](y, x, x.strides[0] // 4, y.strides[0] // 4, x.shape[0], x.shape[1],
                                  BLOCK_SIZE=triton.next_power_of_2(x.shape[1]), num_stages=2, num_warps=4)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_layer_norm_forward_and_locked_weight_gradient():
    rng = np.random.default_rng(1)
    M, N = 37, 300
    x = rng.standard_normal((M, N)).astype(np.float32)
    w, b = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    y, mean, rstd = np.empty_like(x), np.empty(M, np.float32), np.empty(M, np.float32)
    layer_norm_fwd[(M,)](x, y, w, b, mean, rstd, x.strides[0] // 4, N, 1e-5, BLOCK_SIZE=128)
    mu, var = x.mean(1, keepdims=True), x.var(1, keepdims=True)
    np.testing.assert_allclose(y, (x - mu) / np.sqrt(var + 1e-5) * w + b, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(mean, mu[:, 0], rtol=1e-5, atol=1e-6)

    dy = rng.standard_normal((M, N)).astype(np.float32)
    group = 4
    dw = np.zeros((group, N), np.float32)
    lock, count = np.zeros(group, np.int32), np.zeros(group, np.int32)
    layer_norm_dw[(M,)](dy, x, mean, rstd, dw, lock, count, N, N, GROUP=group, BLOCK=512)
    xhat = (x - mean[:, None]) * rstd[:, None]
    np.testing.assert_allclose(dw.sum(0), (dy * xhat).sum(0), rtol=1e-4, atol=1e-4)
    assert (lock == 0).all() and count.sum() == M
    assert layer_norm_dw.last_launch["path"] == "lockstep" and layer_norm_dw.last_launch["rounds"] == -(-M // group)

    # without the rounds (locks.py), the launch runs in groups no larger than the locks; launched
    # again, it starts at the group size that ran (no full run up to the lock first); same bits
    prev = locks.set_enabled(False)
    try:
        for path in ("lockstep (4 programs at a time", "lockstep (4 programs at a time, as the last launch"):
            again = np.zeros_like(dw)
            lock[:], count[:] = 0, 0
            layer_norm_dw[(M,)](dy, x, mean, rstd, again, lock, count, N, N, GROUP=group, BLOCK=512)
            assert layer_norm_dw.last_launch["path"].startswith(path), layer_norm_dw.last_launch["path"]
            np.testing.assert_array_equal(again, dw)
    finally:
        locks.set_enabled(prev)
        layer_norm_dw._groups.clear()


def test_tutorial_matmul_with_jitted_activation():
    rng = np.random.default_rng(2)
    M, N, K = 300, 200, 150  # ragged, with a partial last GROUP_SIZE_M group
    a, b = rng.standard_normal((M, K)).astype(np.float16), rng.standard_normal((K, N)).astype(np.float16)
    c = np.empty((M, N), np.float16)
    grid = lambda META: (triton.cdiv(M, META["BLOCK_SIZE_M"]) * triton.cdiv(N, META["BLOCK_SIZE_N"]),)
    matmul_kernel[grid](a, b, c, M, N, K, K, 1, N, 1, N, 1, BLOCK_SIZE_M=32, BLOCK_SIZE_N=64, BLOCK_SIZE_K=32,
                        GROUP_SIZE_M=4, ACTIVATION="leaky_relu", num_warps=4, num_stages=3)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    ref = np.where(ref >= 0, ref, 0.01 * ref)
    assert np.abs(c - ref).max() <= 0.5 * np.spacing(np.abs(ref).astype(np.float16)).max() + 150 * 2.0 ** -24 * 200


def test_vector_add():
    x, y = np.arange(1000, dtype=np.float32), np.ones(1000, np.float32)
    out = np.empty_like(x)
    add_kernel[lambda meta: (triton.cdiv(1000, meta["BLOCK"]),)](x, y, out, 1000, BLOCK=256)
    np.testing.assert_array_equal(out, x + y)


def test_seeded_dropout_regenerates_its_mask_from_the_seed():
    x = np.random.default_rng(3).uniform(1, 2, 5000).astype(np.float32)

    def drop(seed):
        out = np.empty_like(x)
        seeded_dropout[(triton.cdiv(5000, 1024),)](x, out, 5000, 0.4, seed, BLOCK=1024)
        return out
    a, b, c = drop(7), drop(7), drop(8)
    np.testing.assert_array_equal(a, b)
    kept = a != 0
    assert abs(kept.mean() - 0.6) < 0.03 and (kept != (c != 0)).mean() > 0.3
    np.testing.assert_allclose(a[kept], x[kept] / np.float32(0.6), rtol=1e-6)


@pytest.mark.parametrize("causal", [False, True])
def test_fused_attention(causal):
    rng = np.random.default_rng(4)
    heads, t, d = 2, 128, 32
    q, k, v = (rng.standard_normal((heads, t, d)).astype(np.float16) for _ in range(3))
    out = np.empty_like(q)
    attention_fwd[(t // 32, heads)](q, k, v, out, d ** -0.5, t, D=d, BLOCK_M=32, BLOCK_N=32, CAUSAL=causal)
    assert attention_fwd.last_launch["path"] == "lockstep"
    s = q.astype(np.float32) @ k.astype(np.float32).transpose(0, 2, 1) * d ** -0.5
    if causal:
        s = np.where(np.tril(np.ones((t, t), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    want = (p / p.sum(-1, keepdims=True)) @ v.astype(np.float32)
    np.testing.assert_allclose(out.astype(np.float32), want, atol=2e-2)


def test_libdevice_asin_and_refused_types():
    x = np.random.default_rng(5).uniform(-1, 1, 1000).astype(np.float32)
    y = np.empty_like(x)
    asin_kernel[(4,)](x, y, 1000, BLOCK=256)
    np.testing.assert_allclose(y, np.arcsin(x), rtol=1e-6, atol=1e-7)
    with pytest.raises(TypeError, match="libdevice.asin takes fp32 or fp64"):
        asin_kernel[(1,)](x.astype(np.float16), np.empty(1000, np.float16), 1000, BLOCK=1024)


def test_grouped_gemm_through_an_address_table():
    rng = np.random.default_rng(6)
    sizes = [(64, 96, 32), (128, 64, 64), (32, 32, 96)]
    a = [rng.standard_normal((m, k)).astype(np.float16) for m, n, k in sizes]
    b = [rng.standard_normal((k, n)).astype(np.float16) for m, n, k in sizes]
    c = [np.zeros((m, n), np.float16) for m, n, k in sizes]
    table = [np.array([triton.data_ptr(x) for x in xs], np.int64) for xs in (a, b, c)]
    grouped_gemm[(7,)](*table, np.array(sizes, np.int32).reshape(-1), len(sizes), NUM_SMS=7, BM=32, BN=32, BK=32)
    assert grouped_gemm.last_launch["path"] == "lockstep"
    for x, y, z in zip(a, b, c):
        np.testing.assert_allclose(z, x.astype(np.float32) @ y.astype(np.float32), rtol=2e-2, atol=5e-2)


def test_persistent_matmul_tutorial_09():
    rng = np.random.default_rng(7)
    M, N, K = 200, 136, 96
    a, b = rng.standard_normal((M, K)).astype(np.float16), rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    matmul_persistent[(5,)](a, b, c, M, N, K, NUM_SMS=5, BM=64, BN=64, BK=32)
    assert matmul_persistent.last_launch["path"] == "lockstep"
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=2e-2, atol=5e-2)


def test_persistent_matmul_through_tensor_descriptors():
    """Ragged edges (M, N, K not multiples of the blocks) handled by the descriptors alone: the
    same answer as the masked tutorial kernel, in lockstep."""
    rng = np.random.default_rng(8)
    M, N, K = 200, 136, 96
    a, b = rng.standard_normal((M, K)).astype(np.float16), rng.standard_normal((K, N)).astype(np.float16)
    c = np.full((M, N), 7, np.float16)
    matmul_descriptor_persistent[(5,)](a, b, c, M, N, K, NUM_SMS=5, BM=64, BN=64, BK=32)
    assert matmul_descriptor_persistent.last_launch["path"] == "lockstep"
    masked = np.zeros((M, N), np.float16)
    matmul_persistent[(5,)](a, b, masked, M, N, K, NUM_SMS=5, BM=64, BN=64, BK=32)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=2e-2, atol=5e-2)
    np.testing.assert_array_equal(c, masked)


def test_tutorial_02_host_code_sizes_its_persistent_grid_from_the_device_and_the_warmed_kernel():
    """Triton's tutorial 02 host code, as it is written (numpy for torch): the device's
    properties from `triton.runtime.driver`, the kernel's registers and shared memory from
    `warmup`, the occupancy from both, and the launch through the warmed kernel."""
    import minitriton as triton
    from minitriton.runtime import driver
    from kernels.tutorials import softmax_persistent as softmax_kernel

    DEVICE = triton.runtime.driver.active.get_active_torch_device()
    properties = driver.active.utils.get_device_properties(DEVICE.index)
    NUM_SM, NUM_REGS = properties["multiprocessor_count"], properties["max_num_regs"]
    SIZE_SMEM, WARP_SIZE = properties["max_shared_mem"], properties["warpSize"]
    assert triton.runtime.driver.active.get_current_target().warp_size == WARP_SIZE == 32

    x = np.random.default_rng(0).standard_normal((1823, 781)).astype(np.float32)
    n_rows, n_cols = x.shape
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    num_warps, num_stages = 8, 2
    y = np.empty_like(x)
    kernel = softmax_kernel.warmup(y, x, x.strides[0] // 4, y.strides[0] // 4, n_rows, n_cols, BLOCK_SIZE=BLOCK_SIZE,
                                   num_stages=num_stages, num_warps=num_warps, grid=(1, ))
    kernel._init_handles()
    n_regs, size_smem = kernel.n_regs, kernel.metadata.shared
    assert n_regs >= 32 and kernel.n_spills == 0 and size_smem >= 0
    occupancy = NUM_REGS // (n_regs * WARP_SIZE * num_warps)
    if size_smem > 0:
        occupancy = min(occupancy, SIZE_SMEM // size_smem)
    num_programs = min(NUM_SM * occupancy, n_rows)
    assert 1 <= num_programs <= n_rows
    kernel[(num_programs, 1, 1)](y, x, x.strides[0] // 4, y.strides[0] // 4, n_rows, n_cols)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
    # the newest tutorial passes the constexprs too, by position, as Triton's compiled kernel takes them
    y2 = np.empty_like(x)
    kernel[(num_programs, 1, 1)](y2, x, x.strides[0] // 4, y2.strides[0] // 4, n_rows, n_cols, BLOCK_SIZE, num_stages)
    np.testing.assert_array_equal(y2, y)
