"""HypoGPU: refusals, the measurer's noise and clock, the oracle, and the wall between tuners
and the model."""
import pathlib
import re

import numpy as np
import pytest

import kernels
from autotune import Task, Config
from kernels import gemm
from kernels.shapes import SHAPES, triton_list
from minitriton.hypogpu import HypoGPU, Measurer, OutOfResources, oracle, A100
from minitriton.hypogpu import model


@pytest.fixture(scope="module")
def square():
    return Task(kernels.matmul, **SHAPES["square"])


def test_spec_is_a100_class():
    assert A100.sms == 108 and A100.smem_per_block == 163 * 1024
    assert A100.tc_peak_flops == pytest.approx(312e12, rel=0.01)
    assert A100.ridge_flops_per_byte == pytest.approx(156, rel=0.01)


def test_lecture_list_has_exactly_twelve_shared_memory_refusals(square):
    dev = HypoGPU()
    refused = []
    for cfg in triton_list():
        try:
            dev.time(square.profiles(cfg))
        except OutOfResources as e:
            refused.append((cfg, e))
    assert len(refused) == 12
    assert all(e.name == "shared memory" and e.required > e.limit == 163 * 1024 for _, e in refused)
    biggest = max(refused, key=lambda r: r[1].required)
    assert biggest[1].required == 4 * (128 * 128 + 128 * 256) * 2      # 384 KB, as the lecture computes
    assert "out of resource: shared memory" in str(biggest[1])


def test_register_refusal_and_partial_subpartitions(square):
    dev = HypoGPU()
    with pytest.raises(OutOfResources, match="registers"):
        dev.time(square.profiles(Config(dict(BLOCK_M=256, BLOCK_N=256, BLOCK_K=16, GROUP_M=8, SPLIT_K=1),
                                        num_warps=1, num_stages=1)))
    # 128 KB of shared memory: one block per SM, so its warps alone must feed the 4 sub-partitions
    base = dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=128, GROUP_M=8, SPLIT_K=1)
    t = {w: dev.time(square.profiles(Config(base, num_warps=w, num_stages=4))) for w in (1, 2, 4)}
    assert t[1] > 1.5 * t[2] and t[2] > t[4]   # at 4 warps the L2 share starts to limit instead


def test_model_is_vectorized_and_agrees_with_scalar_calls(square):
    dev = HypoGPU()
    rng = np.random.default_rng(0)
    cfgs = square.space.sample(rng, 40)
    arrays = {k: np.array([c.all_kwargs()[k] for c in cfgs]) for k in square.space.names}
    vec, _ = dev.times(gemm.launch_profile(square.shape, arrays))
    for c, v in zip(cfgs, vec):
        try:
            assert dev.time(square.profiles(c)) == pytest.approx(v, rel=1e-12)
        except OutOfResources:
            assert v == np.inf


def test_unexplained_slowdown_never_speeds_up():
    keys = np.arange(100_000, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    u = model.unexplained(keys)
    assert (u >= 1).all() and (u <= 1 + A100.unexplained_max).all() and u.std() > 0


def test_measurer_noise_cost_and_reproducibility(square):
    cfg = Config(dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, GROUP_M=8, SPLIT_K=1), num_warps=4, num_stages=4)
    true = HypoGPU().time(square.profiles(cfg))
    m = Measurer(seed=1)
    r = m.measure(square, cfg, repeats=400)
    ratios = np.array(r.samples) / true
    assert abs(np.log(ratios).std() - 0.015) < 0.002 and abs(np.median(ratios) - 1) < 0.003
    assert r.min <= r.median <= max(r.samples) and r.ok and r.time == r.median
    assert m.clock == pytest.approx(1.0 + 400 * 100 * true) and r.cost == pytest.approx(m.clock)
    again = Measurer(seed=1).measure(square, cfg, repeats=400)
    assert again.samples == r.samples


def test_failed_measurement_costs_the_compile_and_says_why(square):
    m = Measurer(seed=0)
    bad = triton_list()[-1]  # BLOCK_N 256, BLOCK_K 128, 4 stages: 384 KB
    r = m.measure(square, bad)
    assert not r.ok and r.time == float("inf") and "shared memory" in r.error
    assert m.clock == 1.0


def test_oracle_finds_the_best_of_the_full_space(square):
    o = oracle(square)
    assert o.times.shape == (157_500,)
    legal = o.legal.mean()
    assert 0.5 <= legal <= 0.75
    assert o.time_of(o.best_config) == o.best_time == o.times.min()
    rng = np.random.default_rng(3)
    dev = HypoGPU()
    for cfg in square.space.sample(rng, 20):   # nothing sampled beats it, and the numbers agree
        t = o.time_of(cfg)
        assert t >= o.best_time
        if np.isfinite(t):
            assert dev.time(square.profiles(cfg)) == pytest.approx(t, rel=1e-12)


def test_task_needs_a_profile_or_a_launch():
    with pytest.raises(TypeError, match="shape"):
        Task(kernels.matmul, M=4, N=4)
    with pytest.raises(TypeError, match="launch"):
        Task(lambda: None)


def test_tuners_never_import_the_model_or_the_oracle():
    """Nothing under autotune/ reads HypoGPU's model, spec, tracer or oracle.  The kernel families
    (autotune/families/) state their launches in HypoGPU's Profile form, as the library kernels
    did from kernels/: they build profiles and read nothing of the model."""
    root = pathlib.Path(__file__).resolve().parent.parent / "autotune"
    forbidden = re.compile(r"hypogpu\.(model|oracle|spec|profile|trace)|import oracle|\boracle\(")
    stating = re.compile(r"hypogpu\.(model|oracle|spec|trace)|import oracle|\boracle\(")
    for path in root.rglob("*.py"):
        rule = stating if path.parent.name == "families" else forbidden
        assert not rule.search(path.read_text()), f"{path} reaches into HypoGPU's internals"


def test_landscape_design_targets():
    """The model's landscape keeps the lecture's shape (issue 3's design targets)."""
    results = {name: oracle(Task(kernels.matmul, **SHAPES[name])) for name in SHAPES}
    sq = results["square"]
    legal = sq.times[sq.legal]
    assert (legal <= 1.05 * sq.best_time).mean() < 0.001
    assert np.median(legal) / sq.best_time >= 3
    assert 2 * 4096 ** 3 / sq.best_time >= 0.5 * A100.tc_peak_flops
    assert results["decode"].best_config["BLOCK_M"] == 16
    assert results["wgrad"].best_config["SPLIT_K"] >= 8
    for name, o in results.items():   # every optimum stays under the roofline
        s = SHAPES[name]
        flops = 2 * s["M"] * s["N"] * s["K"]
        nbytes = 2 * (s["M"] * s["K"] + s["K"] * s["N"] + s["M"] * s["N"])
        assert flops / o.best_time < A100.tc_peak_flops and nbytes / o.best_time < A100.dram_bytes_per_s
    arrays = sq.space.arrays()
    best = sq.best_config.all_kwargs()
    fixed = np.ones(sq.times.shape, bool)
    for k in ("BLOCK_M", "BLOCK_N", "num_warps", "GROUP_M", "SPLIT_K"):
        fixed &= arrays[k] == best[k]
    best_stages = []
    for bk in (16, 32, 64, 128):
        sel = fixed & (arrays["BLOCK_K"] == bk)
        best_stages.append(int(arrays["num_stages"][sel][np.argmin(sq.times[sel])]))
    assert best_stages == sorted(best_stages, reverse=True) and len(set(best_stages)) >= 3


def test_oracle_times_a_space_whose_follow_on_launch_mixes_scalars_and_arrays():
    # row_sum's second launch has scalar warps but registers per config (SPLIT): shapes differ
    task = Task(kernels.row_sum, M=4096, N=8192)
    times = oracle(task).times
    assert times.shape == (task.space.size,) and np.isfinite(times).sum() > task.space.size // 2
