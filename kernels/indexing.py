"""Two kernels whose time is all in their indexing: a row gather (an embedding lookup, the
indices loaded from memory) and a tiled transpose (edge tiles masked).  benchmarks/ragged.py
times them beside Triton's tutorials at shapes that do not fill their blocks."""
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
