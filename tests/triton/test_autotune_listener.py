"""Triton's python/test/unit/runtime/test_autotune_listener.py, ported to minitriton: the
autotuning listener (`triton.knobs.autotuning.listener`) told of a fresh tuning with every field,
not told of an in-memory cache hit, told of a disk cache hit (cache_hit=True, no duration), and
not told when a single config needs no tuning.

Source: triton-lang/triton (MIT licence), the stored copy at commit
4e9530d2f41e97244d621d0ecf9629d6ec10f46b.  Kernels and listeners unchanged; host code ours on
numpy (torch.randn / torch.empty as numpy's).
"""
import numpy as np

import minitriton as triton                 # was: import triton
import minitriton.language as tl            # was: import triton.language as tl
from minitriton.runtime.jit import JITFunction


def do_bench(kernel_call, quantiles, use_cuda_graph=False):
    return triton.testing.do_bench(kernel_call, quantiles=quantiles, warmup=1, rep=1)


def _arrays(N):
    return np.empty(N, np.float32), np.random.default_rng(0).standard_normal(N).astype(np.float32)


def test_autotune_listener_fresh(device: str, fresh_knobs) -> None:
    """Test that the listener fires on fresh benchmark with all fields populated."""
    captured = []

    def listener(*, fn, key, best_config, configs_timings, duration, cache_hit):
        captured.append({
            "fn": fn,
            "key": key,
            "best_config": best_config,
            "configs_timings": configs_timings,
            "duration": duration,
            "cache_hit": cache_hit,
        })

    fresh_knobs.autotuning.listener = listener

    configs = [triton.Config({"BLOCK_SIZE": 32}), triton.Config({"BLOCK_SIZE": 128})]

    @triton.autotune(configs=configs, key=["N"], do_bench=do_bench)
    @triton.jit
    def _kernel(dst, src, N, BLOCK_SIZE: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        x = tl.load(src + offsets, mask=offsets < N)
        tl.store(dst + offsets, x, mask=offsets < N)

    N = 1024
    dst, src = _arrays(N)
    _kernel[(triton.cdiv(N, 32), )](dst, src, N=N)

    # Listener fired exactly once
    assert len(captured) == 1
    result = captured[0]

    # Fresh benchmark, not cache hit
    assert not result["cache_hit"]

    # fn is unwrapped to JITFunction
    assert isinstance(result["fn"], JITFunction)

    # best_config is one of the configs tested
    assert result["best_config"] in result["configs_timings"]

    # All configs have timings
    assert len(result["configs_timings"]) == 2

    # Duration is set for fresh benchmark
    assert result["duration"] is not None and result["duration"] > 0
    np.testing.assert_array_equal(dst, src)     # ours: the launch ran with the chosen config


def test_autotune_listener_in_memory_cache_hit(device: str, fresh_knobs) -> None:
    """Test that the listener does NOT fire on in-memory cache hit."""
    captured = []

    def listener(*, fn, key, best_config, configs_timings, duration, cache_hit):
        captured.append(True)

    fresh_knobs.autotuning.listener = listener

    configs = [triton.Config({"BLOCK_SIZE": 32}), triton.Config({"BLOCK_SIZE": 128})]

    @triton.autotune(configs=configs, key=["N"], do_bench=do_bench)
    @triton.jit
    def _kernel(dst, src, N, BLOCK_SIZE: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        x = tl.load(src + offsets, mask=offsets < N)
        tl.store(dst + offsets, x, mask=offsets < N)

    N = 1024
    dst, src = _arrays(N)

    # First call: fresh benchmark
    _kernel[(triton.cdiv(N, 32), )](dst, src, N=N)
    assert len(captured) == 1

    # Second call with same key: in-memory cache hit, listener should NOT fire again
    _kernel[(triton.cdiv(N, 32), )](dst, src, N=N)
    assert len(captured) == 1


def test_autotune_listener_disk_cache_hit(device: str, fresh_knobs, fresh_triton_cache) -> None:
    """Test that the listener fires with cache_hit=True and duration=None on disk cache hit."""
    captured = []

    def listener(*, fn, key, best_config, configs_timings, duration, cache_hit):
        captured.append({
            "cache_hit": cache_hit,
            "duration": duration,
        })

    fresh_knobs.autotuning.listener = listener

    configs = [triton.Config({"BLOCK_SIZE": 32}), triton.Config({"BLOCK_SIZE": 128})]

    @triton.autotune(configs=configs, key=["N"], cache_results=True)
    @triton.jit
    def _kernel(dst, src, N, BLOCK_SIZE: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        x = tl.load(src + offsets, mask=offsets < N)
        tl.store(dst + offsets, x, mask=offsets < N)

    N = 1024
    dst, src = _arrays(N)

    # First call: fresh benchmark, populates disk cache
    _kernel[(triton.cdiv(N, 32), )](dst, src, N=N)
    assert len(captured) == 1
    assert not captured[0]["cache_hit"]
    assert captured[0]["duration"] is not None and captured[0]["duration"] > 0

    # Clear in-memory cache so next call hits disk cache
    _kernel.cache.clear()

    # Second call: disk cache hit
    _kernel[(triton.cdiv(N, 32), )](dst, src, N=N)
    assert len(captured) == 2
    assert captured[1]["cache_hit"]
    assert captured[1]["duration"] is None


def test_autotune_listener_single_config(device: str, fresh_knobs) -> None:
    """Test that the listener does NOT fire for single-config autotune (no benchmarking)."""
    captured = []

    def listener(*, fn, key, best_config, configs_timings, duration, cache_hit):
        captured.append(True)

    fresh_knobs.autotuning.listener = listener

    @triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 32})], key=["N"], do_bench=do_bench)
    @triton.jit
    def _kernel(dst, src, N, BLOCK_SIZE: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        x = tl.load(src + offsets, mask=offsets < N)
        tl.store(dst + offsets, x, mask=offsets < N)

    N = 1024
    dst, src = _arrays(N)
    _kernel[(triton.cdiv(N, 32), )](dst, src, N=N)

    # Single config: no autotune benchmarking, listener should not fire
    assert len(captured) == 0
