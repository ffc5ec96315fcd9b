"""Triton's python/test/unit/runtime/test_do_bench.py, ported to minitriton: `n_warmup` and
`n_repeat` fix how many times `do_bench` calls a function (here one that launches no kernel,
which minitriton times on the CPU; one that launches minitriton kernels is timed on HypoGPU).

Source: triton-lang/triton (MIT licence), the stored copy at commit
c1673c8bb40cfec04a03b012a366546b35553781.
"""
import numpy as np
import pytest

import minitriton as triton                 # was: import triton
import minitriton.language as tl
from minitriton.hypogpu import HypoGPU


def test_fixed_n_warmup_and_n_repeat(device):
    call_count = 0

    def fn():
        nonlocal call_count
        call_count += 1

    triton.testing.do_bench(fn, n_warmup=3, n_repeat=7)
    # 1 initial call (JIT warmup) + 3 warmup + 7 repeat
    assert call_count == 1 + 3 + 7


# -- ours: what the port leaves to minitriton ---------------------------------------------------------------------
@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def test_a_launching_function_is_timed_on_hypogpu_n_repeat_times():
    x = np.arange(4096, dtype=np.float32)
    y = np.zeros_like(x)
    times = triton.testing.do_bench(lambda: _copy[(4,)](x, y, 4096, BLOCK=1024), n_repeat=5, return_mode="all")
    assert len(times) == 5 and all(t > 0 for t in times)
    assert (y == 0).all()       # traced, not run: HypoGPU times the launch, the CPU never computes it


@pytest.mark.parametrize("bad", [-1, 2.5, True, "3"])
def test_a_count_that_is_not_one_is_refused_naming_it(bad):
    with pytest.raises(ValueError, match="n_repeat"):
        triton.testing.do_bench(lambda: None, n_repeat=bad)


def test_do_bench_cudagraph_charges_no_launch_overheads():
    """Ours: a function's launches replayed from a CUDA graph cost what do_bench measures less
    HypoGPU's launch overhead for each; quantiles as do_bench's; plain Python timed on the CPU."""
    x = np.arange(4096, dtype=np.float32)
    y = np.zeros_like(x)

    def two_launches():
        _copy[(4,)](x, y, 4096, BLOCK=1024)
        _copy[(4,)](y, x, 4096, BLOCK=1024)

    gpu = HypoGPU()
    plain = triton.testing.do_bench(two_launches, return_mode="median", device=gpu)
    graph = triton.testing.do_bench_cudagraph(two_launches, return_mode="median", device=gpu)
    assert graph == pytest.approx(plain - 2 * gpu.spec.launch_overhead_s * 1e3, rel=0.05)
    lo, mid, hi = triton.testing.do_bench_cudagraph(two_launches, quantiles=[0.2, 0.5, 0.8], device=gpu)
    assert lo <= mid <= hi
    assert triton.testing.do_bench_cudagraph(lambda: sum(range(100))) > 0
