"""Each library kernel's stated launch profile matches what the CPU executor counts when the
kernel really runs (tensor-core FLOPs, bytes loaded and stored, programs, loop trips)."""
import numpy as np
import pytest

from kernels import gemm, conv, rowsum, rowsoftmax
from minitriton.hypogpu import HypoGPU
from minitriton.hypogpu.trace import trace


def _totals(p):
    g, k = float(p.grid), float(p.k_steps)
    return dict(grid=g, k_steps=k, tc_flops=g * k * float(p.tc_flops_step), loaded=g * k * float(p.load_bytes_step),
                stored=g * float(p.store_bytes), alu=g * float(p.alu_flops), smem_stage=float(p.smem_stage))


def _launches(stated):
    return [stated] + [e for e in stated.extra if bool(np.asarray(e.enabled))]


def _check(stated, traced):
    stated = _launches(stated)
    assert [p.name for p in stated] == [p.name for p in traced]
    for s, t in zip(stated, traced):
        ts, tt = _totals(s), _totals(t)
        for field in ts:
            assert tt[field] == pytest.approx(ts[field], rel=1e-9, abs=1e-9), (s.name, field, ts[field], tt[field])


MATMUL_CASES = [
    (dict(M=200, N=300, K=100), dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8, SPLIT_K=1), {}),
    (dict(M=96, N=80, K=2048), dict(BLOCK_M=32, BLOCK_N=16, BLOCK_K=64, GROUP_M=2, SPLIT_K=4), {}),
    (dict(M=64, N=48, K=300), dict(BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, GROUP_M=1, SPLIT_K=16), {}),
    (dict(M=130, N=70, K=50), dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=16, GROUP_M=4, SPLIT_K=1),
     dict(bias=True, activation="relu")),
    (dict(M=130, N=70, K=50), dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=16, GROUP_M=4, SPLIT_K=2),
     dict(bias=True, activation="relu")),
    (dict(M=130, N=70, K=50), dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=16, GROUP_M=4, SPLIT_K=1),
     dict(bias=True, activation="relu", fuse_epilogue=False)),
]


@pytest.mark.parametrize("shape,cfg,opts", MATMUL_CASES)
def test_matmul_profile_matches_counts(shape, cfg, opts):
    cfg = dict(cfg, num_warps=4, num_stages=3)
    a = np.zeros((shape["M"], shape["K"]), np.float16)
    b = np.zeros((shape["K"], shape["N"]), np.float16)
    bias = np.zeros(shape["N"], np.float16) if opts.get("bias") else None
    traced = trace(gemm.matmul, a, b, bias, opts.get("activation"), config=cfg,
                   fuse_epilogue=opts.get("fuse_epilogue", True))
    _check(gemm.launch_profile(shape, cfg, **opts), traced)


def test_conv2d_profile_matches_counts():
    shape = dict(N=2, H=11, W=9, C=12, F=24, KH=3, KW=3, stride=(2, 1), padding=(1, 2))
    cfg = dict(BLOCK_M=32, BLOCK_N=16, BLOCK_K=32, GROUP_M=2, SPLIT_K=2, num_warps=4, num_stages=3)
    x = np.zeros((2, 11, 9, 12), np.float16)
    w = np.zeros((3, 3, 12, 24), np.float16)
    traced = trace(conv.conv2d, x, w, stride=(2, 1), padding=(1, 2), config=cfg)
    _check(conv.launch_profile(shape, cfg), traced)


@pytest.mark.parametrize("split", [1, 8])
def test_rowsum_profile_matches_counts(split):
    cfg = dict(BLOCK_N=256, SPLIT=split, num_warps=4, num_stages=2)
    x = np.zeros((5, 3000), np.float16)
    _check(rowsum.launch_profile(dict(M=5, N=3000), cfg), trace(rowsum.row_sum, x, cfg))


def test_softmax_profile_matches_counts():
    cfg = dict(ROWS=4, num_warps=8, num_stages=2)
    x = np.zeros((37, 781), np.float16)
    _check(rowsoftmax.launch_profile(dict(M=37, N=781), cfg), trace(rowsoftmax.softmax, x, cfg))


def test_traced_and_stated_times_agree():
    dev = HypoGPU()
    shape = dict(M=512, N=4096, K=1024)
    a, b = np.zeros((512, 1024), np.float16), np.zeros((1024, 4096), np.float16)
    rng = np.random.default_rng(0)
    for cfg in gemm.SPACE.sample(rng, 12):
        stated, _ = dev.times(gemm.launch_profile(shape, cfg.all_kwargs()))
        traced = [dev.times(p)[0] for p in trace(gemm.matmul, a, b, config=cfg)]
        if np.isfinite(stated):
            assert float(sum(traced)) == pytest.approx(float(stated), rel=0.05)
        else:
            assert not np.isfinite(float(sum(traced)))
