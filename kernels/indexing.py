"""Kernels whose time is in their indexing: a row gather (an embedding lookup, the indices
loaded from memory), a tiled transpose and a matmul that masks its edge tiles (the form most
hand-written matmuls take, where Triton's tutorial wraps rows with `% M`).
benchmarks/ragged.py times them beside Triton's tutorials at shapes that do not fill their
blocks."""
import minitriton as mt
import minitriton.language as tl


@mt.jit
def embedding(table, ids, out, n, D: tl.constexpr, BLOCK_ROWS: tl.constexpr):
    """out[r] = table[ids[r]] for the BLOCK_ROWS rows of this program (rows past n skipped)."""
    rows = tl.program_id(0) * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS)
    keep = rows < n
    idx = tl.load(ids + rows, mask=keep, other=0)
    cols = tl.arange(0, D)
    vals = tl.load(table + idx[:, None] * D + cols[None, :], mask=keep[:, None], other=0.0)
    tl.store(out + rows[:, None] * D + cols[None, :], vals, mask=keep[:, None])


@mt.jit
def transpose(x, y, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """y = x.T for a row-major M x N x, one BM x BN tile per program."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tile = tl.load(x + rm[:, None] * N + rn[None, :], mask=mask)
    tl.store(y + rn[None, :] * M + rm[:, None], tile, mask=mask)


@mt.jit
def masked_matmul(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """c = a @ b (row-major, fp32 accumulation), one BM x BN tile per program, every load and
    store masked at the matrices' edges."""
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BN)
    rm = pid // tiles_n * BM + tl.arange(0, BM)
    rn = pid % tiles_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        ks = k * BK + rk
        x = tl.load(a + rm[:, None] * K + ks[None, :], mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        y = tl.load(b + ks[:, None] * N + rn[None, :], mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(x, y, acc)
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(c.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))
