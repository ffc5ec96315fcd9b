"""Triton's tutorial kernels 01-09, written in the tutorials' style (our own code), run unchanged
but for the imports: `import minitriton as triton`, `import minitriton.language as tl`.

tests/test_tutorials.py checks their numbers; benchmarks/tutorials.py times them against numpy.
"""
import minitriton as triton            # was: import triton
import minitriton.language as tl      # was: import triton.language as tl
from minitriton.language.extra import libdevice


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def softmax_row(out_ptr, in_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
    num = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * stride + cols, num / tl.sum(num, axis=0), mask=cols < n_cols)


@triton.jit
def softmax_persistent(out_ptr, in_ptr, in_row_stride, out_row_stride, n_rows, n_cols,
                       BLOCK_SIZE: tl.constexpr, num_stages: tl.constexpr):
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
        cols = tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        row = tl.load(in_ptr + row_idx * in_row_stride + cols, mask=mask, other=-float("inf"))
        shifted = row - tl.max(row, axis=0)
        num = tl.exp(shifted)
        tl.store(out_ptr + row_idx * out_row_stride + cols, num / tl.sum(num, axis=0), mask=mask)


@triton.jit
def leaky_relu(x):
    return tl.where(x >= 0, x, 0.01 * x)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                  GROUP_SIZE_M: tl.constexpr, ACTIVATION: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    if ACTIVATION == "leaky_relu":
        accumulator = leaky_relu(accumulator)
    c = accumulator.to(tl.float16)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@triton.jit
def seeded_dropout(x_ptr, out_ptr, n, p, seed, BLOCK: tl.constexpr):
    """Tutorial 04: a dropout mask regenerated from (seed, offset) instead of stored."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    keep = tl.rand(seed, offs) > p
    tl.store(out_ptr + offs, tl.where(keep, x / (1 - p), 0.0), mask=mask)


@triton.jit
def layer_norm_fwd(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        acc += tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N
    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        acc += x * x
    rstd = 1 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        tl.store(Y + cols, (x - mean) * rstd * w + b, mask=mask)


@triton.jit
def layer_norm_dw(DY, X, Mean, Rstd, DW, Lock, Count, stride, N, GROUP: tl.constexpr, BLOCK: tl.constexpr):
    """The backward pass's dW partial sums, accumulated by groups of rows under a spin lock."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * stride + cols, mask=mask, other=0.)
    dy = tl.load(DY + row * stride + cols, mask=mask, other=0.)
    partial = dy * (x - tl.load(Mean + row)) * tl.load(Rstd + row)
    lock_id = row % GROUP
    Lock += lock_id
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count + lock_id)
    if count != 0:
        partial += tl.load(DW + lock_id * N + cols, mask=mask)
    tl.store(DW + lock_id * N + cols, partial, mask=mask)
    tl.store(Count + lock_id, count + 1)
    tl.atomic_xchg(Lock, 0)


@triton.jit
def attention_fwd(Q, K, V, Out, sm_scale, T, D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  CAUSAL: tl.constexpr):
    start_m = tl.program_id(0)
    base = tl.program_id(1) * T * D
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, D)
    q = tl.load(Q + base + offs_m[:, None] * D + offs_d[None, :])
    m_i = tl.zeros([BLOCK_M], tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, D], tl.float32)
    qk_scale = sm_scale * 1.44269504
    hi = (start_m + 1) * BLOCK_M if CAUSAL else T        # causal: the loop bound depends on the program
    for start_n in range(0, hi, BLOCK_N):
        k = tl.load(K + base + (start_n + offs_n)[None, :] * D + offs_d[:, None])
        qk = tl.dot(q, k)
        if CAUSAL:
            qk = tl.where(offs_m[:, None] >= start_n + offs_n[None, :], qk, -float("inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        p = tl.math.exp2(qk * qk_scale - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + base + (start_n + offs_n)[:, None] * D + offs_d[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc * alpha[:, None])
        m_i = m_ij
    tl.store(Out + base + offs_m[:, None] * D + offs_d[None, :], (acc / l_i[:, None]).to(tl.float16))


@triton.jit
def asin_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    """Tutorial 07: a libdevice function inside a kernel."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, libdevice.asin(tl.load(x_ptr + offs, mask=mask)), mask=mask)


@triton.jit
def grouped_gemm(a_addrs, b_addrs, c_addrs, dims, n_groups, NUM_SMS: tl.constexpr, BM: tl.constexpr,
                 BN: tl.constexpr, BK: tl.constexpr):
    """Tutorial 08's shape: NUM_SMS programs walk the tiles of every problem; each problem's
    matrices are reached through int64 addresses in a table (row-major, dims = M, N, K)."""
    tile = tl.program_id(0)
    first = 0
    for g in range(n_groups):
        M, N, K = tl.load(dims + 3 * g), tl.load(dims + 3 * g + 1), tl.load(dims + 3 * g + 2)
        tiles_n = tl.cdiv(N, BN)
        count = tl.cdiv(M, BM) * tiles_n
        while tile >= first and tile < first + count:
            a = tl.load(a_addrs + g).to(tl.pointer_type(tl.float16))
            b = tl.load(b_addrs + g).to(tl.pointer_type(tl.float16))
            c = tl.load(c_addrs + g).to(tl.pointer_type(tl.float16))
            rows = (tile - first) // tiles_n * BM + tl.arange(0, BM)
            cols = (tile - first) % tiles_n * BN + tl.arange(0, BN)
            ks = tl.arange(0, BK)
            a_tile = a + rows[:, None] * K + ks[None, :]
            b_tile = b + ks[:, None] * N + cols[None, :]
            acc = tl.zeros((BM, BN), tl.float32)
            for _ in range(0, tl.cdiv(K, BK)):
                acc += tl.dot(tl.load(a_tile), tl.load(b_tile))
                a_tile += BK
                b_tile += BK * N
            tl.store(c + rows[:, None] * N + cols[None, :], acc.to(tl.float16))
            tile += NUM_SMS
        first += count


@triton.jit
def matmul_persistent(a_ptr, b_ptr, c_ptr, M, N, K, NUM_SMS: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                      BK: tl.constexpr):
    """Tutorial 09's shape: out-of-range rows and columns clamped with tl.where, K masked."""
    num_pid_n = tl.cdiv(N, BN)
    num_tiles = tl.cdiv(M, BM) * num_pid_n
    for tile_id in range(tl.program_id(0), num_tiles, NUM_SMS):   # uneven: some programs get one more tile
        pid_m = tile_id // num_pid_n
        pid_n = tile_id % num_pid_n
        rows = pid_m * BM + tl.arange(0, BM)
        cols = pid_n * BN + tl.arange(0, BN)
        offs_am = tl.where(rows < M, rows, 0)
        offs_bn = tl.where(cols < N, cols, 0)
        acc = tl.zeros((BM, BN), tl.float32)
        for k in range(0, tl.cdiv(K, BK)):
            offs_k = k * BK + tl.arange(0, BK)
            a = tl.load(a_ptr + offs_am[:, None] * K + offs_k[None, :], mask=offs_k[None, :] < K, other=0.0)
            b = tl.load(b_ptr + offs_k[:, None] * N + offs_bn[None, :], mask=offs_k[:, None] < K, other=0.0)
            acc = tl.dot(a, b, acc)
        tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc.to(tl.float16),
                 mask=(rows[:, None] < M) & (cols[None, :] < N))


@triton.jit
def matmul_descriptor_persistent(a_ptr, b_ptr, c_ptr, M, N, K, NUM_SMS: tl.constexpr, BM: tl.constexpr,
                                 BN: tl.constexpr, BK: tl.constexpr):
    """Tutorial 09's tensor-descriptor variant: tiles moved by descriptors made in the kernel,
    so ragged edges need no masks (what lies outside reads as zero and is not written)."""
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    num_pid_n = tl.cdiv(N, BN)
    num_tiles = tl.cdiv(M, BM) * num_pid_n
    for tile_id in range(tl.program_id(0), num_tiles, NUM_SMS):
        off_m = tile_id // num_pid_n * BM
        off_n = tile_id % num_pid_n * BN
        acc = tl.zeros((BM, BN), tl.float32)
        for k in range(0, tl.cdiv(K, BK)):
            acc = tl.dot(a_desc.load([off_m, k * BK]), b_desc.load([k * BK, off_n]), acc)
        c_desc.store([off_m, off_n], acc.to(tl.float16))
