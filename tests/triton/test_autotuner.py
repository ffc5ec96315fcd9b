"""Triton's python/test/unit/runtime/test_autotuner.py, ported to minitriton: `@autotune` with
keyword arguments in any order, dtypes in the key, `restore_value` and `reset_to_zero` (arguments
that are None skipped), pre- and post-hooks called in pairs, both kinds of pruning (a fractional
`top_k` keeps at least one config, and counts the configs left after early pruning),
`triton.runtime.Autotuner` built directly with a stand-in kernel and a custom `do_bench`, a
config's `ir_override` in its name, and pruning every config away.

Source: triton-lang/triton (MIT licence), the stored copy at commit
009401737888df54cfa5427fab82b0f12d47a35b.  Kernels unchanged; the host code is ours on numpy
(torch.randn -> numpy, `triton.testing.assert_close` -> numpy's).  Skipped as Triton skips them
without a CUDA GPU: the IR and PTX overrides, `test_exceed_tmem`, `test_exceed_threads`, and
`test_kwargs` with CUDA graphs (an expected failure there too).
`test_pruned_single_config_skips_benchmark` sets `triton.knobs` through our `fresh_knobs`
fixture (conftest.py), as Triton's own does.
"""
import numpy as np
import pytest

import minitriton as triton                 # was: import triton
import minitriton.language as tl            # was: import triton.language as tl


def do_bench(kernel_call, quantiles, use_cuda_graph=False):
    return triton.testing.do_bench(kernel_call, quantiles=quantiles, warmup=1, rep=1)


def randn(n):
    return np.random.default_rng(0).standard_normal(n).astype(np.float32)


@pytest.mark.parametrize('use_cuda_graph', [False, True])
def test_kwargs(use_cuda_graph: bool, device: str):
    if use_cuda_graph:
        pytest.xfail("CUDA is not available")

    M, N = 1024, 16
    src = randn(M * N)
    dst = np.empty(M * N, np.float32)

    configs = [triton.Config(kwargs={'BLOCK_SIZE_M': 32}), triton.Config(kwargs={'BLOCK_SIZE_M': 128})]

    @triton.autotune(configs=configs, key=["M"],
                     do_bench=lambda kernel, quantiles: do_bench(kernel, quantiles, use_cuda_graph))
    @triton.jit
    def _kernel(dst, src, stride_m: tl.constexpr, M, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_M: tl.constexpr):
        offsets_m = tl.program_id(0) * stride_m + tl.arange(0, BLOCK_SIZE_M)
        offsets_n = tl.arange(0, BLOCK_SIZE_N)
        x = tl.load(src + offsets_m[:, None] * BLOCK_SIZE_N + offsets_n[None, :])
        tl.store(dst + offsets_m[:, None] * BLOCK_SIZE_N + offsets_n[None, :], x)

    grid = lambda META: (triton.cdiv(N, META['BLOCK_SIZE_M']), )
    _kernel[grid](dst, src, N, M, N)
    # the key word args could be in arbitrary order.
    _kernel[grid](dst=dst, src=src, M=M // 2, stride_m=N, BLOCK_SIZE_N=N)
    assert len(_kernel.cache) == 2


def test_dtype_cache_results(device: str):
    M, N = 1024, 16
    src = randn(M * N)
    dst = np.empty(M * N, np.float32)

    configs = [triton.Config(kwargs={'BLOCK_SIZE_M': 32}), triton.Config(kwargs={'BLOCK_SIZE_M': 128})]

    @triton.autotune(configs=configs, key=["DTYPE"], cache_results=True)
    @triton.jit
    def _kernel(dst, src, stride_m: tl.constexpr, DTYPE: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                BLOCK_SIZE_M: tl.constexpr):
        offsets_m = tl.program_id(0) * stride_m + tl.arange(0, BLOCK_SIZE_M)
        offsets_n = tl.arange(0, BLOCK_SIZE_N)
        x = tl.load(src + offsets_m[:, None] * BLOCK_SIZE_N + offsets_n[None, :])
        x = x.to(DTYPE)
        tl.store(dst + offsets_m[:, None] * BLOCK_SIZE_N + offsets_n[None, :], x)

    grid = lambda META: (triton.cdiv(N, META['BLOCK_SIZE_M']), )
    _kernel[grid](dst, src, N, tl.float32, N)
    assert len(_kernel.cache) == 1


def test_no_do_bench(device: str):
    M, N = 1024, 16
    src = randn(M * N)
    dst = np.empty(M * N, np.float32)

    configs = [triton.Config(kwargs={'BLOCK_SIZE_M': 32}), triton.Config(kwargs={'BLOCK_SIZE_M': 128})]

    @triton.autotune(configs=configs, key=["M"])
    @triton.jit
    def _kernel(dst, src, stride_m: tl.constexpr, M, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_M: tl.constexpr):
        offsets_m = tl.program_id(0) * stride_m + tl.arange(0, BLOCK_SIZE_M)
        offsets_n = tl.arange(0, BLOCK_SIZE_N)
        x = tl.load(src + offsets_m[:, None] * BLOCK_SIZE_N + offsets_n[None, :])
        tl.store(dst + offsets_m[:, None] * BLOCK_SIZE_N + offsets_n[None, :], x)

    grid = lambda META: (triton.cdiv(N, META['BLOCK_SIZE_M']), )
    _kernel[grid](dst, src, N, M, N)
    assert len(_kernel.cache) == 1


@pytest.mark.parametrize('pass_kwargs_to_kernel', [False, True])
def test_restore(pass_kwargs_to_kernel, device):
    N = 1024
    src = np.zeros(N, np.float32)

    configs = [triton.Config(kwargs={'BLOCK_SIZE': 32}), triton.Config(kwargs={'BLOCK_SIZE': 128})]

    @triton.autotune(configs=configs, key=['N'], restore_value=['src'], do_bench=do_bench)
    @triton.jit
    def _kernel(src, N, BLOCK_SIZE: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        x = tl.load(src + offsets, mask=offsets < N) + 1
        tl.store(src + offsets, x, mask=offsets < N)

    grid = lambda META: (triton.cdiv(N, META['BLOCK_SIZE']), )
    if pass_kwargs_to_kernel:
        _kernel[grid](src=src, N=N)
    else:
        _kernel[grid](src, N)
    np.testing.assert_allclose(src, np.ones_like(src))


@pytest.mark.parametrize('src_is_none', [False, True])
@pytest.mark.parametrize('pass_kwargs_to_kernel', [False, True])
def test_reset_to_zero(pass_kwargs_to_kernel, src_is_none, device):
    N = 1024
    dst = np.full((N, ), 2.0, np.float32)
    src = None if src_is_none else dst

    configs = [triton.Config(kwargs={'BLOCK_SIZE': 32}), triton.Config(kwargs={'BLOCK_SIZE': 128})]

    @triton.autotune(configs=configs, key=['N'], reset_to_zero=['src'], do_bench=do_bench)
    @triton.jit
    def _kernel(src, dst, N, BLOCK_SIZE: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offsets < N
        if src is not None:
            tl.store(src + offsets, tl.full([BLOCK_SIZE], 1, dtype=src.dtype.element_ty), mask=mask)
        else:
            tl.store(dst + offsets, tl.full([BLOCK_SIZE], 1, dtype=dst.dtype.element_ty), mask=mask)

    grid = lambda META: (triton.cdiv(N, META['BLOCK_SIZE']), )
    if pass_kwargs_to_kernel:
        _kernel[grid](src=src, dst=dst, N=N)
    else:
        _kernel[grid](src, dst, N)
    np.testing.assert_allclose(dst, np.ones_like(dst))


@pytest.mark.parametrize('pass_kwargs_to_kernel', [False, True])
def test_restore_with_none(pass_kwargs_to_kernel, device):
    N = 1024
    src = None
    dst = np.full((N, ), 2.0, np.float32)

    configs = [triton.Config(kwargs={'BLOCK_SIZE': 32}), triton.Config(kwargs={'BLOCK_SIZE': 128})]

    @triton.autotune(configs=configs, key=['N'], restore_value=['src'], do_bench=do_bench)
    @triton.jit
    def _kernel(src, dst, N, BLOCK_SIZE: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offsets < N
        if src is not None:
            tl.store(src + offsets, tl.full([BLOCK_SIZE], 1, dtype=src.dtype.element_ty), mask=mask)
        else:
            tl.store(dst + offsets, tl.full([BLOCK_SIZE], 1, dtype=dst.dtype.element_ty), mask=mask)

    grid = lambda META: (triton.cdiv(N, META['BLOCK_SIZE']), )
    if pass_kwargs_to_kernel:
        _kernel[grid](src=src, dst=dst, N=N)
    else:
        _kernel[grid](src, dst, N)
    np.testing.assert_allclose(dst, np.ones_like(dst))


def test_hooks(device):
    # Autotuner's pre- and post- hooks should be called the same number of times
    N = 4096
    src = np.zeros(N, np.float32)

    configs = [triton.Config(kwargs={'BLOCK_SIZE': 4096}), triton.Config(kwargs={'BLOCK_SIZE': 32})]

    values = {"counter": 0, "has_exception": False}

    def _pre_hook(*args, **kwargs):
        values["counter"] += 1

    def _post_hook(*args, exception):
        values["counter"] -= 1
        if exception is not None:
            values["has_exception"] = True
        assert values["counter"] == 0

    @triton.autotune(configs=configs, key=['N'], do_bench=do_bench, pre_hook=_pre_hook, post_hook=_post_hook)
    @triton.heuristics({"N_STAGES": lambda nargs: 64 if nargs['N'] == 4096 else 4})
    @triton.jit
    def _kernel(src, N, N_STAGES: tl.constexpr, BLOCK_SIZE: tl.constexpr):
        offsets = tl.arange(0, BLOCK_SIZE)
        max_iters = tl.cdiv(N, BLOCK_SIZE)
        for _ in tl.range(max_iters, num_stages=N_STAGES):
            x = tl.load(src + offsets, mask=offsets < N)
            tl.store(src + offsets, x, mask=offsets < N)
            offsets += BLOCK_SIZE

    _kernel[(1, )](src, N)

    # (Triton: on NVIDIA GPUs N_STAGES = 64 runs out of shared memory; elsewhere no exception)
    assert values["has_exception"] is False


@pytest.mark.parametrize('with_perf_model', [False, True])
def test_prune_configs(with_perf_model: bool, device: str):
    N = 1024
    src = randn(N)
    dst = np.empty(N, np.float32)
    records = {}

    def early_config_prune(configs, named_args, **kwargs):
        records['run_early_config_prune'] = True
        if "N" in kwargs and kwargs["N"] == 1024:
            records['capture_kwargs'] = True
        if "dst" in named_args and "src" in named_args and len(named_args) == 2:
            records['capture_named_args'] = True
        return [configs[0]]

    def perf_model(*args, **kwargs):
        records['run_perf_model'] = True
        return kwargs['BLOCK_SIZE']

    configs = [triton.Config(kwargs={'BLOCK_SIZE': 32}), triton.Config(kwargs={'BLOCK_SIZE': 128})]

    if with_perf_model:
        prune_configs_by = {'perf_model': perf_model, 'top_k': 1}
    else:
        prune_configs_by = {'early_config_prune': early_config_prune}

    @triton.autotune(configs=configs, key=['N'], prune_configs_by=prune_configs_by, do_bench=do_bench)
    @triton.jit
    def _kernel(dst, src, N, BLOCK_SIZE: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        x = tl.load(src + offsets, mask=offsets < N)
        tl.store(dst + offsets, x, mask=offsets < N)

    grid = lambda META: (triton.cdiv(N, META['BLOCK_SIZE']), )
    _kernel[grid](dst, src, N=N)
    np.testing.assert_allclose(src, dst)
    if with_perf_model:
        assert len(records) == 1
        assert records['run_perf_model']
    else:
        assert len(records) == 3
        assert records['run_early_config_prune']
        assert records['capture_kwargs']
        assert records['capture_named_args']


def test_prune_configs_fractional_top_k_keeps_one(device: str):
    N = 1024
    src = randn(N)
    dst = np.empty(N, np.float32)

    def perf_model(*args, **kwargs):
        return kwargs['BLOCK_SIZE']

    configs = [triton.Config(kwargs={'BLOCK_SIZE': 32}), triton.Config(kwargs={'BLOCK_SIZE': 128})]
    prune_configs_by = {'perf_model': perf_model, 'top_k': 0.3}

    @triton.autotune(configs=configs, key=['N'], prune_configs_by=prune_configs_by, do_bench=do_bench)
    @triton.jit
    def _kernel(dst, src, N, BLOCK_SIZE: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        x = tl.load(src + offsets, mask=offsets < N)
        tl.store(dst + offsets, x, mask=offsets < N)

    grid = lambda META: (triton.cdiv(N, META['BLOCK_SIZE']), )
    _kernel[grid](dst, src, N=N)
    np.testing.assert_allclose(src, dst)


def test_prune_configs_fractional_top_k_after_early_prune():
    configs = [triton.Config(kwargs={'BLOCK_SIZE': block_size}) for block_size in range(1, 11)]
    estimated = []
    launched = []
    benchmarked = []

    class Kernel:

        def __init__(self):
            self.fn = lambda: None

        def run(self, **kwargs):
            launched.append(kwargs['BLOCK_SIZE'])

    def do_bench(kernel_call, quantiles):
        kernel_call()
        benchmarked.append(launched[-1])
        return [launched[-1]] * 3

    def early_config_prune(configs, named_args, **kwargs):
        return configs[:6]

    def perf_model(*args, **kwargs):
        estimated.append(kwargs['BLOCK_SIZE'])
        return kwargs['BLOCK_SIZE']

    tuner = triton.runtime.Autotuner(
        Kernel(),
        arg_names=[],
        configs=configs,
        key=[],
        reset_to_zero=None,
        restore_value=None,
        do_bench=do_bench,
        prune_configs_by={
            'early_config_prune': early_config_prune,
            'perf_model': perf_model,
            'top_k': 0.5,
        },
    )

    tuner.run()

    assert estimated == list(range(1, 7))
    assert benchmarked == [1, 2, 3]


def test_config_ir_override_changes_disk_cache_key():
    # Autotuner derives persisted result-cache keys from Config.__str__().
    first = triton.Config(kwargs={"BLOCK_SIZE": 32}, ir_override="first.ttir")
    second = triton.Config(kwargs={"BLOCK_SIZE": 32}, ir_override="second.ttir")

    assert str(first) != str(second)


@pytest.mark.skip(reason="Requires compute capability >= 9 for NV")
def test_override_ttir(device):
    pass


@pytest.mark.skip(reason="Requires compute capability >= 9 for NV")
def test_override_ttgir(device):
    pass


@pytest.mark.skip(reason="PTX file in this unit test is only for SM90")
def test_override_ptx(device):
    pass


def test_exceed_tmem(device):
    pytest.skip("Test requires tensor memory.")


def test_exceed_threads(device):
    pytest.skip("CUDA is not available")


def test_prune_all_configs(device):
    N = 1024
    src = randn(N)
    dst = np.empty(N, np.float32)

    def early_config_prune(configs, named_args, **kwargs):
        return []

    configs = [triton.Config(kwargs={'BLOCK_SIZE': 32}), triton.Config(kwargs={'BLOCK_SIZE': 128})]

    prune_configs_by = {'early_config_prune': early_config_prune}

    @triton.autotune(configs=configs, key=['N'], prune_configs_by=prune_configs_by)
    @triton.jit
    def _kernel(dst, src, N, BLOCK_SIZE: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        x = tl.load(src + offsets, mask=offsets < N)
        tl.store(dst + offsets, x, mask=offsets < N)

    grid = lambda META: (triton.cdiv(N, META['BLOCK_SIZE']), )
    try:
        _kernel[grid](dst, src, N=N)
        pytest.fail("Expected exception was not thrown.")
    except triton.TritonError as e:
        assert e is not None and str(
            e
        ) == "Autotuner error: No valid autotuner configs after pruning. `early_config_prune` should return at least one config."


@pytest.mark.parametrize("prune_kind", ["early_config_prune", "perf_model"])
def test_pruned_single_config_skips_benchmark(prune_kind: str, device: str, fresh_knobs):
    N = 1024
    src = randn(N)
    dst = np.empty(N, np.float32)
    records = {}
    captured = []
    configs = [triton.Config(kwargs={'BLOCK_SIZE': 32}), triton.Config(kwargs={'BLOCK_SIZE': 128})]
    fresh_knobs.autotuning.print = True
    fresh_knobs.autotuning.listener = lambda **kwargs: captured.append(kwargs)

    def do_not_bench(kernel_call, quantiles):
        records['run_do_bench'] = True
        raise AssertionError("autotune benchmark should be skipped for a single pruned config")

    if prune_kind == "early_config_prune":

        def early_config_prune(configs, named_args, **kwargs):
            records['run_early_config_prune'] = True
            return [configs[1]]

        prune_configs_by = {'early_config_prune': early_config_prune}
    else:

        def perf_model(*args, **kwargs):
            records['run_perf_model'] = True
            return 0 if kwargs['BLOCK_SIZE'] == 128 else 1

        prune_configs_by = {'perf_model': perf_model, 'top_k': 1}

    @triton.autotune(configs=configs, key=['N'], prune_configs_by=prune_configs_by, do_bench=do_not_bench)
    @triton.jit
    def _kernel(dst, src, N, BLOCK_SIZE: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        x = tl.load(src + offsets, mask=offsets < N)
        tl.store(dst + offsets, x, mask=offsets < N)

    grid = lambda META: (triton.cdiv(N, META['BLOCK_SIZE']), )
    _kernel[grid](dst, src, N=N)
    np.testing.assert_allclose(src, dst)
    assert _kernel.best_config == configs[1]
    assert 'run_do_bench' not in records
    assert captured == []
